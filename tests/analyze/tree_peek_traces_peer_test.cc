// `tally tree`, `tally peek` and `tally traces` against the real google/pprof (-tree,
// -peek, -traces) on every pprof fixture: the same header, the same nodes with flat and
// cum, the same callers and callees with their weights in the same order, and for traces
// the same samples with the same stacks. Whole reports are compared line by line, after
// removing tally's "+0xOFFSET" from unsymbolized names (pprof prints "[lib]").
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "core/profile.h"
#include "formats/format.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

std::vector<std::string> pprof_fixtures() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(shared("fixtures/gperf")))
    if (e.path().filename().string().ends_with(".pb.gz")) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// Runs `pprof pprof_args FILE` and `tally tally_args FILE` and compares their output.
void expect_same(const std::string& file, const std::vector<std::string>& pprof_args,
                 const std::vector<std::string>& tally_args) {
  std::vector<std::string> pprof_argv{find_pprof()};
  pprof_argv.insert(pprof_argv.end(), pprof_args.begin(), pprof_args.end());
  pprof_argv.push_back(file);
  const RunResult expected = run(pprof_argv);
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  std::vector<std::string> tally_argv = tally_args;
  tally_argv.push_back(file);
  const RunResult actual = run_tally(tally_argv);
  ASSERT_EQ(actual.exit_code, 0) << actual.err;
  ASSERT_NE(expected.out.find("---"), std::string::npos) << expected.out;
  EXPECT_EQ(ties_by_name(as_pprof_names(actual.out)), ties_by_name(expected.out));
}

TEST(TreeVsPprof, EveryFixture) {
  TALLY_REQUIRE_PEER(find_pprof(), "pprof");
  const auto files = pprof_fixtures();
  ASSERT_GE(files.size(), 5u);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    expect_same(file, {"-tree"}, {"tree"});
    expect_same(file, {"-tree", "-nodecount=3"}, {"tree", "--nodecount", "3"});
    expect_same(file, {"-tree", "-cum", "-nodecount=5"}, {"tree", "--cum", "--nodecount", "5"});
    expect_same(file, {"-tree", "-lines"}, {"tree", "--granularity", "lines"});
    expect_same(file, {"-tree", "-sample_index=samples"}, {"tree", "--sample-index", "samples"});
  }
}

TEST(TreeVsPprof, Filters) {
  TALLY_REQUIRE_PEER(find_pprof(), "pprof");
  for (const char* name : {"split", "shlib"}) {
    const std::string file = shared(std::string("fixtures/gperf/") + name + ".pb.gz");
    SCOPED_TRACE(name);
    expect_same(file, {"-tree", "-focus=func_a|lib_hot"}, {"tree", "--focus", "func_a|lib_hot"});
    expect_same(file, {"-tree", "-ignore=func_[ab]|lib_cold"},
                {"tree", "--ignore", "func_[ab]|lib_cold"});
    // Hidden frames are skipped over: main's callers become __libc_start_call_main's.
    expect_same(file, {"-tree", "-hide=main"}, {"tree", "--hide", "main"});
    expect_same(file, {"-tree", "-show=func|lib_"}, {"tree", "--show", "func|lib_"});
  }
}

TEST(PeekVsPprof, EveryFixture) {
  TALLY_REQUIRE_PEER(find_pprof(), "pprof");
  for (const std::string& file : pprof_fixtures()) {
    SCOPED_TRACE(file);
    expect_same(file, {"-peek=run_rounds"}, {"peek", "run_rounds"});
    expect_same(file, {"-peek=main|lib"}, {"peek", "main|lib"});
    expect_same(file, {"-peek=."}, {"peek", "."});
    expect_same(file, {"-peek=run", "-addresses"}, {"peek", "run", "--granularity", "addresses"});
    expect_same(file, {"-peek=start", "-hide=run_rounds"}, {"peek", "start", "--hide", "run_rounds"});
  }
}

TEST(TracesVsPprof, EveryFixture) {
  TALLY_REQUIRE_PEER(find_pprof(), "pprof");
  for (const std::string& file : pprof_fixtures()) {
    SCOPED_TRACE(file);
    expect_same(file, {"-traces"}, {"traces"});
    expect_same(file, {"-traces", "-lines"}, {"traces", "--granularity", "lines"});
    expect_same(file, {"-traces", "-sample_index=samples"}, {"traces", "--sample-index", "samples"});
    expect_same(file, {"-traces", "-focus=func_a|lib_hot"}, {"traces", "--focus", "func_a|lib_hot"});
    expect_same(file, {"-traces", "-show=func|lib_|run"}, {"traces", "--show", "func|lib_|run"});
  }
}

// Sample labels (pprof prints them above each stack): the perf script fixtures carry comm
// and tid, converted to pprof by tally.
TEST(TracesVsPprof, LabelsFromPerfScript) {
  TALLY_REQUIRE_PEER(find_pprof(), "pprof");
  TempDir dir;
  for (const char* name : {"split-fp", "shlib-fp", "deep-fp", "split-nofp-dwarf"}) {
    SCOPED_TRACE(name);
    const std::string out = dir.file(std::string(name) + ".pb.gz");
    const RunResult converted = run_tally(
        {"convert", shared(std::string("fixtures/perf/") + name + ".perf-script.txt"), "--to",
         "pprof", "-o", out});
    ASSERT_EQ(converted.exit_code, 0) << converted.err;
    expect_same(out, {"-traces"}, {"traces"});
    const RunResult traces = run_tally({"traces", out});
    EXPECT_NE(traces.out.find("      comm:  "), std::string::npos) << traces.out;
  }
}

// Numeric labels with and without units (pprof's unit rules: the sample's unit, "bytes" for
// alignment/request, else the key), repeated keys, keys longer than the column.
TEST(TracesVsPprof, LabelKindsAndUnits) {
  TALLY_REQUIRE_PEER(find_pprof(), "pprof");
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  p.period_type = p.sample_types[1];
  p.period = 1000000;
  const core::FunctionId f = p.add_function({.name = p.intern("work"), .system_name = p.intern("work")});
  const core::FunctionId g = p.add_function({.name = p.intern("main"), .system_name = p.intern("main")});
  const core::LocationId a = p.add_location({.address = 0x1000, .lines = {{.function = f, .line = 3}}});
  const core::LocationId b = p.add_location({.address = 0x2000, .lines = {{.function = g, .line = 9}}});
  const std::vector<core::LocationId> stack{a, b};
  auto str = [&](const char* key, const char* value) {
    return core::Label{.key = p.intern(key), .str = p.intern(value)};
  };
  auto num = [&](const char* key, int64_t value, const char* unit) {
    return core::Label{.key = p.intern(key), .num = value, .num_unit = unit ? p.intern(unit) : 0};
  };
  const std::vector<int64_t> values{2, 2000000};
  p.add_sample(stack, values,
               std::vector<core::Label>{str("thread", "worker-1"), str("comm", "a"),
                                        str("comm", "b"), num("bytes", 2048, "bytes"),
                                        num("alignment", 16, nullptr), num("pid", 4242, nullptr),
                                        num("request_latency", 1500000, "nanoseconds")});
  p.add_sample(stack, values,
               std::vector<core::Label>{str("a_very_long_label_key", "x"),
                                        num("bytes", 3 << 20, "bytes"), num("bytes", 10, "bytes"),
                                        num("pid", -7, nullptr)});
  p.add_sample(stack, values);
  core::Diagnostics diagnostics;
  auto files = formats::write_profile(p, formats::Format::pprof, diagnostics);
  ASSERT_TRUE(files) << files.error().message;
  TempDir dir;
  const std::string file = dir.file("labels.pb.gz");
  write_bytes(file, files->front().bytes);
  expect_same(file, {"-traces"}, {"traces"});
  const RunResult traces = run_tally({"traces", file});
  EXPECT_NE(traces.out.find("     bytes:  3MB 10B\n"), std::string::npos) << traces.out;
  EXPECT_NE(traces.out.find("      comm:  a b\n"), std::string::npos) << traces.out;
}

}  // namespace
}  // namespace tally::test
