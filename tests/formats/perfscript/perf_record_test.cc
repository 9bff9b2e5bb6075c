// The real thing: `perf record`, `perf script`, and tally's import of that text. The
// fixture split (func_a/b/c/d frameless leaves, see ../shared/fixtures/README.md) shows
// what each call-graph mode finds; tests/programs/measured_split, which measures the CPU
// time each function took, is the truth the leaf shares are held to (on a shared machine
// an iteration's time changes during a run, so the split of iterations is not the truth).
// perf missing or refused skips on a developer's machine and fails under CI
// (TALLY_REQUIRE_PEERS=1), which installs perf and runs as root.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "perf_script_view.h"
#include "support/measured_split.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

std::string paranoid_level() {
  std::string level = read_text("/proc/sys/kernel/perf_event_paranoid");
  while (!level.empty() && (level.back() == '\n' || level.back() == ' ')) level.pop_back();
  return level;
}

struct Recorded {
  std::string script;          // perf script's text ("" after a test failure)
  std::string command_output;  // what the command printed (perf record passes it through)
};

// Records `command` at 999 Hz of cpu-clock with the given call-graph options.
Recorded record(const TempDir& dir, const std::vector<std::string>& call_graph,
                const std::vector<std::string>& command) {
  const std::string perf = find_program("perf");
  const std::string data = dir.file("perf.data");
  std::vector<std::string> argv = {perf, "record", "-e", "cpu-clock", "-F", "999"};
  argv.insert(argv.end(), call_graph.begin(), call_graph.end());
  argv.insert(argv.end(), {"-o", data, "--"});
  argv.insert(argv.end(), command.begin(), command.end());
  RunResult record = run(argv);
  if (record.exit_code != 0) {
    ADD_FAILURE() << "perf record failed (exit " << record.exit_code << "): " << record.err;
    return {};
  }
  RunResult script = run({perf, "script", "-i", data});
  EXPECT_EQ(script.exit_code, 0) << script.err;
  return {script.out, record.out};
}

// The fixture split, 20 rounds: about 0.22 s.
std::string record_split(const TempDir& dir, const std::vector<std::string>& call_graph) {
  return record(dir, call_graph, {shared("fixtures/bin/split"), "-r", "20"}).script;
}

bool perf_record_refused(std::string& why) {
  const std::string perf = find_program("perf");
  TempDir dir;
  RunResult probe = run({perf, "record", "-e", "cpu-clock", "-o", dir.file("probe.data"), "--",
                         "/bin/true"});
  if (probe.exit_code == 0) return false;
  why = "perf record is refused here (perf_event_paranoid = " + paranoid_level() +
        "): " + probe.err.substr(0, 300);
  return true;
}

#define REQUIRE_PERF_RECORD()                                  \
  do {                                                         \
    TALLY_REQUIRE_PEER(find_program("perf"), "perf");          \
    std::string why;                                           \
    if (perf_record_refused(why)) TALLY_SKIP_OR_FAIL_IN_CI(why); \
  } while (0)

// Leaf shares in percent of the samples whose leaf is one of func_a..d.
std::map<std::string, double> split_shares(const core::Profile& p) {
  auto totals = leaf_totals(p, 0);
  double sum = 0;
  for (const char* f : {"func_a", "func_b", "func_c", "func_d"}) sum += static_cast<double>(totals[f]);
  std::map<std::string, double> shares;
  for (const char* f : {"func_a", "func_b", "func_c", "func_d"})
    shares[f] = sum > 0 ? 100.0 * static_cast<double>(totals[f]) / sum : 0;
  return shares;
}

// What perf script gave is a cpu-clock profile with samples in every burner.
void expect_cpu_clock_samples(const core::Profile& p) {
  // -F 999 for about 0.22 s: about 200 samples.
  EXPECT_GT(p.total(0), 100);
  EXPECT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[1].type), "cpu-clock");
  EXPECT_EQ(p.str(p.sample_types[1].unit), "nanoseconds");
  auto totals = leaf_totals(p, 0);
  for (const char* f : {"func_a", "func_b", "func_c", "func_d"}) EXPECT_GT(totals[f], 0) << f;
}

// The callers of func_a..d in every sample where they are the leaf.
std::set<std::string> callers_of_burners(const core::Profile& p) {
  std::set<std::string> callers;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    auto frames = frame_names(p, i);
    if (frames.size() >= 2 && frames[0].starts_with("func_")) callers.insert(frames[1]);
  }
  return callers;
}

// The leaf shares against the CPU time measured_split measured in each function, within 3
// percentage points: about a second at 999 Hz, 1000 samples (perf report put each within
// 0.3 points of it here).
TEST(PerfRecord, LeafSharesAreTheMeasuredSplit) {
  REQUIRE_PERF_RECORD();
  TempDir dir;
  const Recorded recorded =
      record(dir, {"-g"}, {measured_split_program(), "-r", "7", "-u", "12000000"});
  ASSERT_FALSE(recorded.script.empty());
  const std::map<std::string, double> truth = measured_split_shares(recorded.command_output);
  ASSERT_EQ(truth.size(), 4u);
  core::Diagnostics diagnostics;
  auto p = read_perf_script_text(recorded.script, diagnostics, "perf script");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_GT(p->total(0), 500);
  const std::map<std::string, double> shares = split_shares(*p);
  for (const auto& [function, percent] : truth)
    EXPECT_NEAR(shares.at(function), percent, 3) << function << " (measured " << percent << "%)";
}

TEST(PerfRecord, FramePointerCallGraph) {
  REQUIRE_PERF_RECORD();
  TempDir dir;
  const std::string text = record_split(dir, {"-g"});
  ASSERT_FALSE(text.empty());
  core::Diagnostics diagnostics;
  auto p = read_perf_script_text(text, diagnostics, "perf script");
  ASSERT_TRUE(p) << p.error().message;
  expect_cpu_clock_samples(*p);
  // func_a..d are frameless leaves (g++ 12 emits no push %rbp for them even with
  // -fno-omit-frame-pointer): the frame-pointer walk skips run_rounds and names main as
  // their caller, as perf report does for split-fp.perf-script.txt.
  EXPECT_EQ(callers_of_burners(*p), std::set<std::string>{"main"});
}

TEST(PerfRecord, DwarfCallGraphFindsRunRounds) {
  REQUIRE_PERF_RECORD();
  TempDir dir;
  const std::string text = record_split(dir, {"--call-graph", "dwarf"});
  ASSERT_FALSE(text.empty());
  core::Diagnostics diagnostics;
  auto p = read_perf_script_text(text, diagnostics, "perf script");
  ASSERT_TRUE(p) << p.error().message;
  expect_cpu_clock_samples(*p);
  // The DWARF unwinder sees through the frameless leaves: run_rounds is their caller.
  EXPECT_EQ(callers_of_burners(*p), std::set<std::string>{"run_rounds"});
  for (size_t i = 0; i < p->sample_count(); ++i) {
    auto frames = frame_names(*p, i);
    if (frames.size() >= 3 && frames[0].starts_with("func_")) {
      EXPECT_EQ(frames[2], "main");
    }
  }
}

}  // namespace
}  // namespace tally::test
