// `tally peek`, `tree` and `traces` against values checked by hand: split.pb.gz's raw
// samples (fixtures/gperf/split.pb.raw.txt: 276 samples of 1ms, func_a 111 under
// run_rounds, func_b 15 + 68, func_c 53, func_d 23 + 6) and callgrind_annotate's
// --tree=both output for callgrind.out.split.default (annotate-inclusive-tree.txt).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace tally::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& l : lines_of(text))
    if (l == line) return true;
  return false;
}

const std::string kSplit = "fixtures/gperf/split.pb.gz";

TEST(Peek, FuncAHasOneCallerRunRounds) {
  const RunResult r = run_tally({"peek", "func_a", shared(kSplit)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 111ms of 276ms = 40.22%; every func_a sample is under run_rounds.
  EXPECT_TRUE(has_line(r.out, std::string(45, ' ') + "111ms   100% |   run_rounds")) << r.out;
  EXPECT_TRUE(has_line(r.out, "     111ms 40.22% 40.22%      111ms 40.22%                | func_a"))
      << r.out;
  EXPECT_EQ(r.out.find("func_b"), std::string::npos) << "only func_a's entry: " << r.out;
}

TEST(Peek, NoMatchIsAnError) {
  const RunResult r = run_tally({"peek", "no_such_function", shared(kSplit)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no matches"), std::string::npos) << r.err;
}

TEST(Tree, RunRoundsCallsTheFourFunctionsInTheWorkloadSplit) {
  const RunResult r = run_tally({"tree", shared(kSplit)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  size_t node = 0;
  while (node < lines.size() && !lines[node].ends_with("| run_rounds")) ++node;
  ASSERT_LT(node + 4, lines.size()) << r.out;
  EXPECT_EQ(lines[node - 1], std::string(45, ' ') + "276ms   100% |   main");
  EXPECT_EQ(lines[node + 1], std::string(45, ' ') + "111ms 40.22% |   func_a");
  EXPECT_EQ(lines[node + 2], std::string(46, ' ') + "83ms 30.07% |   func_b");
  EXPECT_EQ(lines[node + 3], std::string(46, ' ') + "53ms 19.20% |   func_c");
  EXPECT_EQ(lines[node + 4], std::string(46, ' ') + "29ms 10.51% |   func_d");
}

TEST(Traces, OneTracePerSampleInOrder) {
  const RunResult r = run_tally({"traces", shared(kSplit)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> leaves;
  for (const std::string& l : lines_of(r.out))
    if (l.size() > 13 && l[9] != ' ' && l[0] != '-') leaves.push_back(l);
  const std::vector<std::string> want{"      23ms   func_d", "      15ms   func_b",
                                      "       6ms   func_d", "      68ms   func_b",
                                      "      53ms   func_c", "     111ms   func_a"};
  EXPECT_EQ(leaves, want) << r.out;
  EXPECT_NE(r.out.find("     111ms   func_a\n             run_rounds\n             main\n"),
            std::string::npos)
      << r.out;
}

TEST(CallGraph, PeekShowsTheCallsWithTheirInclusiveCost) {
  const RunResult r = run_tally(
      {"peek", "run_rounds", shared("fixtures/callgrind/callgrind.out.split.default")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // annotate-inclusive-tree.txt: main -> run_rounds 100,000,136; run_rounds -> func_a
  // 40,000,022, func_b 30,000,022, func_c 20,000,022, func_d 10,000,022.
  const auto lines = lines_of(r.out);
  size_t node = 0;
  while (node < lines.size() && !lines[node].ends_with("| run_rounds(long, unsigned long)")) ++node;
  ASSERT_LT(node + 4, lines.size()) << r.out;
  EXPECT_NE(lines[node].find("100000136 98.29%"), std::string::npos) << lines[node];
  EXPECT_EQ(lines[node - 1], std::string(41, ' ') + "100000136   100% |   main");
  EXPECT_EQ(lines[node + 1], std::string(42, ' ') + "40000022 40.00% |   func_a");
  EXPECT_EQ(lines[node + 2], std::string(42, ' ') + "30000022 30.00% |   func_b");
  EXPECT_EQ(lines[node + 3], std::string(42, ' ') + "20000022 20.00% |   func_c");
  EXPECT_EQ(lines[node + 4], std::string(42, ' ') + "10000022 10.00% |   func_d");
}

TEST(CallGraph, TreeAndTracesAreUnsupported) {
  const std::string file = shared("fixtures/callgrind/callgrind.out.split.default");
  for (const char* report : {"tree", "traces"}) {
    const RunResult r = run_tally({report, file});
    EXPECT_EQ(r.exit_code, 4) << report;
    EXPECT_NE(r.err.find("call-graph profile"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace tally::test
