// The real thing: `perf record` on the split workload (func_a/b/c/d burn exactly
// 40/30/20/10% of its loop iterations, see ../shared/fixtures/README.md), `perf script`,
// and tally's import of that text. Skips when perf is missing (fails in CI, where
// TALLY_REQUIRE_PEERS=1) or when the kernel refuses perf_event_open.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "perf_script_view.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

std::string paranoid_level() {
  std::string level = read_text("/proc/sys/kernel/perf_event_paranoid");
  while (!level.empty() && (level.back() == '\n' || level.back() == ' ')) level.pop_back();
  return level;
}

// Records `split -r 20` with the given call-graph options and returns perf script's text,
// or "" after GTEST_SKIP when perf record is refused.
std::string record_split(const TempDir& dir, const std::vector<std::string>& call_graph) {
  const std::string perf = find_program("perf");
  const std::string data = dir.file("perf.data");
  std::vector<std::string> argv = {perf, "record", "-e", "cpu-clock", "-F", "999"};
  argv.insert(argv.end(), call_graph.begin(), call_graph.end());
  argv.insert(argv.end(), {"-o", data, "--", shared("fixtures/bin/split"), "-r", "20"});
  RunResult record = run(argv);
  if (record.exit_code != 0) {
    ADD_FAILURE() << "perf record failed (exit " << record.exit_code << "): " << record.err;
    return "";
  }
  RunResult script = run({perf, "script", "-i", data});
  EXPECT_EQ(script.exit_code, 0) << script.err;
  return script.out;
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

void expect_split(const core::Profile& p) {
  auto shares = split_shares(p);
  EXPECT_NEAR(shares["func_a"], 40, 5);
  EXPECT_NEAR(shares["func_b"], 30, 5);
  EXPECT_NEAR(shares["func_c"], 20, 5);
  EXPECT_NEAR(shares["func_d"], 10, 5);
  // -F 999 for about 0.22 s: about 200 samples; enough for the +-5 points above.
  EXPECT_GT(p.total(0), 100);
  EXPECT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[1].type), "cpu-clock");
  EXPECT_EQ(p.str(p.sample_types[1].unit), "nanoseconds");
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

TEST(PerfRecord, FramePointerCallGraph) {
  const std::string perf = find_program("perf");
  TALLY_REQUIRE_PEER(perf, "perf");
  std::string why;
  if (perf_record_refused(why)) GTEST_SKIP() << why;
  TempDir dir;
  const std::string text = record_split(dir, {"-g"});
  ASSERT_FALSE(text.empty());
  core::Diagnostics diagnostics;
  auto p = read_perf_script_text(text, diagnostics, "perf script");
  ASSERT_TRUE(p) << p.error().message;
  expect_split(*p);
  // func_a..d are frameless leaves (g++ 12 emits no push %rbp for them even with
  // -fno-omit-frame-pointer): the frame-pointer walk skips run_rounds and names main as
  // their caller, as perf report does for split-fp.perf-script.txt.
  EXPECT_EQ(callers_of_burners(*p), std::set<std::string>{"main"});
}

TEST(PerfRecord, DwarfCallGraphFindsRunRounds) {
  const std::string perf = find_program("perf");
  TALLY_REQUIRE_PEER(perf, "perf");
  std::string why;
  if (perf_record_refused(why)) GTEST_SKIP() << why;
  TempDir dir;
  const std::string text = record_split(dir, {"--call-graph", "dwarf"});
  ASSERT_FALSE(text.empty());
  core::Diagnostics diagnostics;
  auto p = read_perf_script_text(text, diagnostics, "perf script");
  ASSERT_TRUE(p) << p.error().message;
  expect_split(*p);
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
