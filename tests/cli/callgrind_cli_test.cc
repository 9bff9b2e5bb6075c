// Callgrind through the command line: convert to and from it, the refusal to turn a call
// graph into stacks without --approximate, the compression switches, merge and cat.
// Expected numbers come from the files themselves (valgrind's own "totals:" line) and from
// the peers' outputs stored beside the fixtures, never from tally's reader.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <sstream>

#include "support/test_support.h"

namespace tally::test {
namespace {

std::string fixture(const std::string& name) { return shared("fixtures/callgrind/" + name); }

// The numbers of the last "totals:" line of a callgrind text (valgrind writes one per file).
std::vector<int64_t> totals_line(const std::string& text) {
  const size_t at = text.rfind("\ntotals:");
  if (at == std::string::npos) return {};
  std::istringstream in(text.substr(at + 8, text.find('\n', at + 1) - at - 8));
  std::vector<int64_t> out;
  for (int64_t v; in >> v;) out.push_back(v);
  return out;
}

// The lines of a text that start with `prefix`.
size_t count_lines_starting(const std::string& text, std::string_view prefix) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.starts_with(prefix);
  return n;
}

// Lines that use a compressed name: "fn=(12)" or "cfn=(3) name" ("fn=(below main)" is a
// name, which valgrind writes too).
size_t compressed_name_lines(const std::string& text) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t open = line.find("=(");
    n += open != std::string::npos && open + 2 < line.size() && std::isdigit(static_cast<unsigned char>(line[open + 2]));
  }
  return n;
}

// callgrind_annotate's "PROGRAM TOTALS" line.
std::string program_totals(const std::string& annotate_output) {
  std::istringstream in(annotate_output);
  for (std::string line; std::getline(in, line);)
    if (line.find("PROGRAM TOTALS") != std::string::npos) return line;
  return "";
}

TEST(CliCallgrind, ConvertToCallgrindKeepsValgrindsTotals) {
  TempDir dir;
  const std::string out = dir.file("split.callgrind");
  RunResult r = run_tally({"convert", fixture("callgrind.out.split.default"), "-o", out, "--to",
                           "callgrind"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<int64_t> expected = totals_line(read_text(fixture("callgrind.out.split.default")));
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_EQ(totals_line(read_text(out)), expected);

  const std::string annotate = find_program("callgrind_annotate");
  TALLY_REQUIRE_PEER(annotate, "callgrind_annotate (valgrind)");
  EXPECT_EQ(program_totals(run({annotate, out}).out),
            program_totals(read_text(fixture("callgrind.out.split.default.annotate.txt"))));
}

TEST(CliCallgrind, CallGraphToAStackFormatNeedsApproximate) {
  TempDir dir;
  for (const char* to : {"pprof", "gperf", "folded", "dcpi"}) {
    const std::string out = dir.file(std::string("out.") + to);
    RunResult r = run_tally({"convert", fixture("callgrind.out.split.default"), "-o", out, "--to", to});
    EXPECT_EQ(r.exit_code, 4) << to;
    EXPECT_NE(r.err.find("--approximate"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << to;
  }
}

TEST(CliCallgrind, ApproximateMakesOneFrameStacksAndSaysWhatIsLost) {
  RunResult r = run_tally({"convert", fixture("callgrind.out.split.default"), "-o", "-", "--to",
                           "folded", "--approximate"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("call edges"), std::string::npos) << r.err;
  // Every self cost is a stack of one frame; together they are the whole run's Ir.
  int64_t sum = 0;
  std::istringstream in(r.out);
  size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    EXPECT_EQ(line.substr(0, space).find(';'), std::string::npos) << line;
    sum += std::stoll(line.substr(space + 1));
  }
  EXPECT_GT(lines, 100u);
  EXPECT_EQ(sum, totals_line(read_text(fixture("callgrind.out.split.default"))).at(0));
}

TEST(CliCallgrind, CompressionIsOnByDefaultAndCanBeTurnedOff) {
  const std::string input = fixture("callgrind.out.split.instr-line");
  RunResult both = run_tally({"convert", input, "-o", "-", "--to", "callgrind"});
  RunResult plain_names =
      run_tally({"convert", input, "-o", "-", "--to", "callgrind", "--no-compress-names"});
  RunResult plain_positions =
      run_tally({"convert", input, "-o", "-", "--to", "callgrind", "--no-compress-positions"});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  ASSERT_EQ(plain_names.exit_code, 0) << plain_names.err;
  ASSERT_EQ(plain_positions.exit_code, 0) << plain_positions.err;

  EXPECT_GT(compressed_name_lines(both.out), 100u);
  EXPECT_EQ(compressed_name_lines(plain_names.out), 0u);
  const size_t relative = count_lines_starting(both.out, "+") + count_lines_starting(both.out, "-") +
                          count_lines_starting(both.out, "*");
  EXPECT_GT(relative, 0u);
  EXPECT_EQ(count_lines_starting(plain_positions.out, "+") +
                count_lines_starting(plain_positions.out, "-") +
                count_lines_starting(plain_positions.out, "*"),
            0u);
  EXPECT_LT(both.out.size(), plain_names.out.size());
  EXPECT_LT(both.out.size(), plain_positions.out.size());
  // Whatever the spelling, the costs are valgrind's.
  const std::vector<int64_t> expected = totals_line(read_text(input));
  for (const RunResult* r : {&both, &plain_names, &plain_positions})
    EXPECT_EQ(totals_line(r->out), expected);
}

TEST(CliCallgrind, MergeOfThreadFilesIsACallgrindFileOfTheirSum) {
  std::vector<std::string> args = {"merge"};
  int64_t sum = 0;
  for (const char* t : {"01", "02", "03", "04"}) {
    const std::string path = fixture(std::string("callgrind.out.split-mt.threads-") + t);
    args.push_back(path);
    sum += totals_line(read_text(path)).at(0);
  }
  args.insert(args.end(), {"-o", "-"});
  RunResult r = run_tally(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("# callgrind format\n")) << r.out.substr(0, 200);
  EXPECT_EQ(totals_line(r.out), std::vector<int64_t>{sum});
}

TEST(CliCallgrind, MergeOfACallGraphWithStacksIsRefused) {
  RunResult r = run_tally({"merge", fixture("callgrind.out.split.default"),
                           shared("fixtures/gperf/split.prof"), "-o", "-"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("call-graph"), std::string::npos) << r.err;
}

TEST(CliCallgrind, CatSummaryCountsCallEdgesAndTotals) {
  RunResult r = run_tally({"cat", "--summary", fixture("callgrind.out.split.jumps")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int64_t ir = totals_line(read_text(fixture("callgrind.out.split.jumps"))).at(0);
  EXPECT_NE(r.out.find("format          callgrind"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("total Ir        " + std::to_string(ir) + " count"), std::string::npos) << r.out;
  // --collect-jumps=yes: the file has jump lines, so the model has jumps.
  EXPECT_EQ(r.out.find("jumps           0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("call edges"), std::string::npos) << r.out;
}

TEST(CliCallgrind, ReadFromStandardInput) {
  const std::string text = read_text(fixture("callgrind.out.split.nocompress"));
  RunResult r = run_tally({"convert", "-", "-o", "-", "--to", "callgrind"}, text);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(totals_line(r.out), totals_line(text));
}

TEST(CliCallgrind, StacksToCallgrindKeepPprofsTotal) {
  // pprof -top of the same profile says "276ms total" (split.pb.pprof-top.txt).
  const std::string top = read_text(shared("fixtures/gperf/split.pb.pprof-top.txt"));
  ASSERT_NE(top.find("of 276ms total"), std::string::npos) << top;
  RunResult r = run_tally({"convert", shared("fixtures/gperf/split.pb.gz"), "-o", "-", "--to",
                           "callgrind"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\npositions: instr line\n"), std::string::npos);
  // Events: samples and cpu/nanoseconds; 276 samples of 1 ms each.
  EXPECT_EQ(totals_line(r.out), (std::vector<int64_t>{276, 276000000}));
}

}  // namespace
}  // namespace tally::test
