// tally daemon --off-cpu end to end (as root, as CI runs): off_cpu_waits (the main thread
// sleeps 30 ms under nap and waits 30 ms on a pipe under wait_pipe, 10 rounds here) runs
// while the daemon samples the machine; the database's off-cpu event must hold each wait
// under its function within 20% of what the program measured by its own clock, with the
// kernel frames that tell the waits apart (do_nanosleep, pipe_read), and its second thread,
// which waits nearly all its life, near the main thread's lifetime. Without --off-cpu
// there is no off-cpu event.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <sstream>
#include <string>
#include <tuple>

#include "daemon_process.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

#define REQUIRE_SYSTEM_WIDE()                                                            \
  do {                                                                                   \
    if (!can_sample_system_wide())                                                       \
      TALLY_SKIP_OR_FAIL_IN_CI("system-wide sampling is not permitted here (needs root " \
                               "or CAP_PERFMON)");                                       \
  } while (0)

// "604.15ms", "2.01s", "970us" in milliseconds.
double as_ms(const std::string& value) {
  size_t end = 0;
  const double v = std::stod(value, &end);
  const std::string unit = value.substr(end);
  if (unit == "s") return v * 1e3;
  if (unit == "us") return v / 1e3;
  if (unit == "ns") return v / 1e6;
  return v;
}

// The cum (ms) of the `tally top` row named `name`; -1: none.
double cum_ms(const std::string& top, const std::string& name) {
  for (const TopRow& row : top_rows(top))
    if (row.name == name) return as_ms(row.cum);
  return -1;
}

TEST(DaemonOffCpu, EachWaitIsUnderItsFunctionWithItsKernelFrames) {
  REQUIRE_SYSTEM_WIDE();
  TempDir dir;
  const std::string db = dir.file("db");
  // -g dwarf: libc's nanosleep and read keep no frame pointer, so a frame-pointer walk
  // from them skips their caller (nap, wait_pipe).
  DaemonProcess daemon(db, {"--off-cpu", "-g", "dwarf", "--flush", "3600"});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  RunResult waits = run({std::string(TESTS_BINARY_DIR) + "/off_cpu_waits", "10"});
  ASSERT_EQ(waits.exit_code, 0) << waits.describe();
  EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();  // flushes before it exits
  std::istringstream out(waits.out);
  unsigned long long tid = 0, lifetime_ns = 0, burn_ns = 0, nap_ns = 0, wait_ns = 0;
  out >> tid >> lifetime_ns >> burn_ns >> nap_ns >> wait_ns;
  ASSERT_GT(nap_ns, 0u) << waits.out;

  for (const auto& [function, kernel, measured_ns] :
       {std::tuple<std::string, std::string, unsigned long long>{"nap", "do_nanosleep", nap_ns},
        {"wait_pipe", "pipe_read", wait_ns}}) {
    auto top = run_tally({"top", "--db", db, "--event", "off-cpu", "--focus", "^" + function + "$",
                          "--nodecount", "100"});
    ASSERT_EQ(top.exit_code, 0) << top.describe();
    const double measured_ms = static_cast<double>(measured_ns) / 1e6;
    EXPECT_NEAR(cum_ms(top.out, function), measured_ms, 0.2 * measured_ms) << top.out << daemon.log();
    EXPECT_NE(top.out.find(kernel), std::string::npos) << top.out;
  }
  // The second thread (answerer) waits nearly all its life, in spans twice as long as
  // nap's: weighting spans by their count instead of their time would miss this.
  auto answerer = run_tally({"top", "--db", db, "--event", "off-cpu", "--focus", "^answerer$",
                             "--nodecount", "100"});
  ASSERT_EQ(answerer.exit_code, 0) << answerer.describe();
  const double lifetime_ms = static_cast<double>(lifetime_ns) / 1e6;
  EXPECT_NEAR(cum_ms(answerer.out, "answerer"), lifetime_ms, 0.2 * lifetime_ms) << answerer.out;
  EXPECT_NE(daemon.log().find("off-cpu (context-switches"), std::string::npos) << daemon.log();
}

TEST(DaemonOffCpu, NotRecordedByDefault) {
  REQUIRE_SYSTEM_WIDE();
  TempDir dir;
  const std::string db = dir.file("db");
  DaemonProcess daemon(db, {"--flush", "3600"});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  ASSERT_EQ(run({std::string(TESTS_BINARY_DIR) + "/off_cpu_waits", "2"}).exit_code, 0);
  EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(db))
    EXPECT_NE(entry.path().filename(), "off-cpu.dcpi") << entry.path();
}

}  // namespace
}  // namespace tally::test
