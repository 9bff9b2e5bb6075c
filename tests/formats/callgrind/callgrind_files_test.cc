// The reader on every real callgrind file of ../shared: valgrind's fixtures, checked
// against callgrind_annotate's tables beside them (parsed here, not copied), and the
// conformance files of gprof2dot and speedscope, checked against numbers worked out by hand
// from their text (the awk commands are in the comments).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "callgrind_annotate_self.h"
#include "callgrind_annotate_tables.h"
#include "callgrind_model_view.h"
#include "callgrind_test_helpers.h"

namespace tally::callgrind::test {
namespace {

std::string fixture(const std::string& name) {
  return tally::test::shared("fixtures/callgrind/" + name);
}

std::vector<std::string> valgrind_fixtures() {
  std::vector<std::string> out;
  for (const std::string& path : callgrind_files("fixtures/callgrind"))
    if (std::filesystem::path(path).filename().string().starts_with("callgrind.out.")) out.push_back(path);
  return out;
}

// --- every file reads ---

TEST(CallgrindFiles, EveryConformanceAndFixtureFileReads) {
  std::vector<std::string> files = callgrind_files("conformance/callgrind");
  const std::vector<std::string> fixtures = valgrind_fixtures();
  files.insert(files.end(), fixtures.begin(), fixtures.end());
  // 8 gprof2dot + 5 speedscope files; the valgrind fixtures listed in fixtures/README.md.
  EXPECT_EQ(files.size(), 13u + 20u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    core::Diagnostics d;
    const std::vector<uint8_t> bytes = tally::test::read_bytes(path);
    EXPECT_TRUE(looks_like_callgrind(bytes));
    auto p = read_profile(bytes, path, d);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_TRUE(p->call_graph.present);
    EXPECT_FALSE(p->sample_types.empty());
    EXPECT_GE(p->call_graph.parts.size(), 1u);
  }
}

// --- valgrind fixtures against callgrind_annotate ---

class ValgrindFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(ValgrindFixture, TotalsAndSelfCostsMatchCallgrindAnnotate) {
  const std::string path = GetParam();
  core::Diagnostics d;
  const core::Profile p = read_file(path, d);
  const AnnotateTables peer = parse_annotate(tally::test::read_text(path + ".annotate.txt"));
  ASSERT_TRUE(peer.program_total.has_value());
  ASSERT_EQ(p.sample_types.size(), 1u);
  EXPECT_EQ(p.str(p.sample_types[0].type), "Ir");
  EXPECT_EQ(p.total(0), *peer.program_total);
  // The file's own totals: line says the same (no warning about it either).
  ASSERT_EQ(p.call_graph.parts.size(), 1u);
  EXPECT_EQ(p.call_graph.parts[0].totals, std::vector<int64_t>{*peer.program_total});
  for (const std::string& w : d.warnings()) EXPECT_EQ(w.find("totals:"), std::string::npos) << w;
  // callgrind_annotate prints the functions above its 99% threshold: every one matches.
  ASSERT_FALSE(peer.self.empty());
  for (const AnnotateEntry& e : peer.self)
    EXPECT_EQ(annotate_self_cost(p, e), e.cost) << e.file << ":" << e.function << " [" << e.object << "]";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ValgrindFixture, ::testing::ValuesIn(valgrind_fixtures()),
                         file_param_name);

TEST(CallgrindFiles, SplitDefaultHasTheWorkloadsKnownSplit) {
  // fixtures/README.md: with -r 2, 5 Ir per iteration and a 20-instruction epilogue give
  // exactly 40,000,020 / 30,000,020 / 20,000,020 / 10,000,020 Ir (40/30/20/10).
  for (const char* name : {"callgrind.out.split.default", "callgrind.out.split.instr-line",
                           "callgrind.out.split.nocompress", "callgrind.out.split.jumps"}) {
    SCOPED_TRACE(name);
    core::Diagnostics d;
    const core::Profile p = read_file(fixture(name), d);
    EXPECT_EQ(self_cost(p, "func_a", 0, "/tally/workloads/split.cc"), 40'000'020);
    EXPECT_EQ(self_cost(p, "func_b", 0, "/tally/workloads/split.cc"), 30'000'020);
    EXPECT_EQ(self_cost(p, "func_c", 0, "/tally/workloads/split.cc"), 20'000'020);
    EXPECT_EQ(self_cost(p, "func_d", 0, "/tally/workloads/split.cc"), 10'000'020);
  }
}

TEST(CallgrindFiles, ShlibAndDeepHaveTheirKnownSplit) {
  core::Diagnostics d;
  // README: lib_hot 50%, main_local 30%, lib_cold 20% (each + a ~20 Ir epilogue), in two
  // objects: the exe and the .so.
  const core::Profile shlib = read_file(fixture("callgrind.out.shlib.default"), d);
  EXPECT_EQ(self_cost(shlib, "lib_hot"), 50'000'026);
  EXPECT_EQ(self_cost(shlib, "main_local"), 30'000'022);
  EXPECT_EQ(self_cost(shlib, "lib_cold"), 20'000'026);
  EXPECT_TRUE(shlib.call_graph.has_instr);
  bool so = false, exe = false;
  for (const core::Mapping& m : shlib.mappings) {
    so |= shlib.str(m.file) == "/tmp/tally-fx/bin/libtallywork.so";
    exe |= shlib.str(m.file) == "/tmp/tally-fx/bin/shlib_main";
  }
  EXPECT_TRUE(so && exe);
  // README: deep_leaf 75%, shallow_leaf 25%.
  const core::Profile deep = read_file(fixture("callgrind.out.deep.default"), d);
  EXPECT_EQ(self_cost(deep, "deep_leaf"), 30'000'026);
  EXPECT_EQ(self_cost(deep, "shallow_leaf"), 10'000'026);
}

// --- the inclusive trees: call edges ---

// Checks every "> callee (Nx)" line under a "*" function of the workload (/tally/...)
// against the model's call edges. callgrind_annotate keys a caller by the file of the call
// site (main's calls from code inlined from stdlib.h are "stdlib.h:main") and a callee by
// its cfi= file, so edges are summed by both positions' function and file.
void expect_edges_match_tree(const std::string& name) {
  SCOPED_TRACE(name);
  core::Diagnostics d;
  const core::Profile p = read_file(fixture(name), d);
  const AnnotateTables tree =
      parse_annotate(tally::test::read_text(fixture(name + ".annotate-inclusive-tree.txt")));
  ASSERT_FALSE(tree.tree.empty());
  AnnotateEntry caller;
  size_t checked = 0;
  for (const AnnotateEntry& e : tree.tree) {
    if (e.mark == '*') caller = e;
    if (e.mark != '>' || !caller.file.starts_with("/tally/")) continue;
    int64_t inclusive = 0, count = 0;
    for (const core::CallEdge& c : p.call_graph.calls) {
      if (!is_position_of(p, c.caller, caller) || !is_position_of(p, c.callee, e)) continue;
      inclusive += c.inclusive[0];
      count += c.count;
    }
    EXPECT_EQ(inclusive, e.cost) << caller.function << " -> " << e.function;
    EXPECT_EQ(count, e.calls) << caller.function << " -> " << e.function;
    ++checked;
  }
  EXPECT_GE(checked, 5u);
}

TEST(CallgrindFiles, InclusiveTreeEdgesMatchCallgrindAnnotate) {
  expect_edges_match_tree("callgrind.out.split.default");
  expect_edges_match_tree("callgrind.out.deep.default");
}

TEST(CallgrindFiles, HandCheckedEdges) {
  core::Diagnostics d;
  // split.default.annotate-inclusive-tree.txt: run_rounds -> func_a "40,000,022 (2x)",
  // main -> run_rounds "100,000,136 (1x)".
  const core::Profile split = read_file(fixture("callgrind.out.split.default"), d);
  const EdgeSum to_a = calls_between(split, "run_rounds(long, unsigned long)", "func_a");
  EXPECT_EQ(to_a.inclusive, 40'000'022);
  EXPECT_EQ(to_a.count, 2);
  EXPECT_EQ(calls_between(split, "main", "run_rounds(long, unsigned long)").inclusive, 100'000'136);
  // deep.default: descend'2 calls itself 412 times for 6,020,519,358 Ir inclusive (the
  // recursion counts each level: more than the program's total).
  const core::Profile deep = read_file(fixture("callgrind.out.deep.default"), d);
  const EdgeSum rec = calls_between(deep, "descend'2", "descend'2");
  EXPECT_EQ(rec.count, 412);
  EXPECT_EQ(rec.inclusive, 6'020'519'358);
}

TEST(CallgrindFiles, JumpsOfSplitJumps) {
  core::Diagnostics d;
  const core::Profile p = read_file(fixture("callgrind.out.split.jumps"), d);
  // grep -c "^jump=" = 360 and grep -c "^jcnd=" = 997 lines; equal (from, to) pairs may
  // be summed into one, so at least one jump each and no more than the lines.
  size_t conditional = 0, plain = 0;
  for (const core::Jump& j : p.call_graph.jumps) {
    (j.conditional ? conditional : plain)++;
    EXPECT_LE(j.followed, j.executed);
  }
  EXPECT_GT(conditional, 0u);
  EXPECT_GT(plain, 0u);
  EXPECT_LE(conditional, 997u);
  EXPECT_LE(plain, 360u);
}

// --- parts ---

TEST(CallgrindFiles, EachDumpFileIsOnePartWithItsHeader) {
  core::Diagnostics d;
  for (int k = 1; k <= 3; ++k) {
    const core::Profile p = read_file(fixture("callgrind.out.split.dumps." + std::to_string(k)), d);
    ASSERT_EQ(p.call_graph.parts.size(), 1u);
    const auto& header = p.call_graph.parts[0].header;
    EXPECT_NE(std::find(header.begin(), header.end(), std::pair<std::string, std::string>(
                                                         "part", std::to_string(k))),
              header.end());
    for (size_t i = 0; i < p.sample_count(); ++i) EXPECT_TRUE(p.labels(i).empty());
  }
  // dumps.2 by hand (callgrind_annotate's table is no help there, see annotate_self_cost):
  // "fn=(1114) func_a / 26 2000009 / fi= 401 1 / fe= 26 1" = 2,000,011, and so on; the
  // workload's 40/30/20/10 split with -u 100000.
  const core::Profile dump2 = read_file(fixture("callgrind.out.split.dumps.2"), d);
  EXPECT_EQ(self_cost(dump2, "func_a"), 2'000'011);
  EXPECT_EQ(self_cost(dump2, "func_b"), 1'500'011);
  EXPECT_EQ(self_cost(dump2, "func_c"), 1'000'011);
  EXPECT_EQ(self_cost(dump2, "func_d"), 500'011);
  // The calls still running when the dump was taken: calls=0, with inclusive costs.
  const EdgeSum running = calls_between(dump2, "main", "run_rounds(long, unsigned long)");
  EXPECT_EQ(running.count, 0);
  EXPECT_EQ(running.inclusive, 5'000'055);
}

// No real file has more than one part (grep -c '^part:' gives 0 or 1 for each): valgrind
// writes a file per dump. So several parts are made by concatenating the dumps.
TEST(CallgrindFiles, ConcatenatedDumpsAreOnePartEach) {
  // The dumps of one run, one after the other, as one file: parts 1, 2, 3 and the base
  // file (the last dump). Each part's total is its file's PROGRAM TOTALS.
  const std::vector<std::string> names = {"callgrind.out.split.dumps.1", "callgrind.out.split.dumps.2",
                                          "callgrind.out.split.dumps.3", "callgrind.out.split.dumps"};
  std::string text;
  std::vector<int64_t> expected;
  for (const std::string& name : names) {
    text += tally::test::read_text(fixture(name));
    if (!text.ends_with("\n")) text += "\n";
    expected.push_back(*parse_annotate(tally::test::read_text(fixture(name + ".annotate.txt"))).program_total);
  }
  core::Diagnostics d;
  const core::Profile p = read_ok(text, d);
  ASSERT_EQ(p.call_graph.parts.size(), 4u);
  std::vector<int64_t> per_part(4, 0);
  for (size_t i = 0; i < p.sample_count(); ++i) {
    const int64_t part = part_of(p, i);
    ASSERT_GE(part, 1);
    ASSERT_LE(part, 4);
    per_part[static_cast<size_t>(part - 1)] += p.values(i)[0];
  }
  EXPECT_EQ(per_part, expected);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(p.call_graph.parts[k].totals, std::vector<int64_t>{expected[k]});
    EXPECT_EQ(p.call_graph.parts[k].header.front().first, "pid");
  }
  // Edges keep their part too: each part's file has calls.
  std::vector<size_t> edges(4, 0);
  for (const core::CallEdge& e : p.call_graph.calls) {
    ASSERT_LT(e.part, 4u);
    ++edges[e.part];
  }
  for (size_t k = 0; k < 4; ++k) EXPECT_GT(edges[k], 0u) << "part " << k + 1;
  // The dumps add up to the whole run (README): func_d's Ir over the parts is the
  // same as in one file of each part read alone.
  int64_t func_d = 0;
  for (const std::string& name : names) {
    core::Diagnostics dd;
    func_d += self_cost(read_file(fixture(name), dd), "func_d");
  }
  EXPECT_EQ(self_cost(p, "func_d"), func_d);
}

// --- conformance files, checked by hand ---

std::string conformance(const std::string& name) {
  return tally::test::shared("conformance/callgrind/" + name);
}

// Self cost per function = the sum of the first cost column of every cost line that does
// not follow calls=, under the last fn= (names resolved through the shared fn/cfn table):
//   awk -f cgself.awk FILE   (the script: /^positions:/ sets the column; /^c?fn=/ keeps the
//   (id) -> name table; /^calls=/ skips the next line; other cost lines add $(column))
// The totals equal the file's summary:/totals: lines except where said.
struct HandChecked {
  const char* file;
  int64_t total;
  const char* function;
  int64_t self;
};

TEST(CallgrindConformance, TotalsAndSelfCostsCheckedByHand) {
  const HandChecked cases[] = {
      {"gprof2dot/bool.callgrind", 309'292'148, "g_type_create_instance", 36'936'398},
      {"gprof2dot/bool.callgrind", 309'292'148, "g_slice_alloc", 26'345'592},
      // bzr (lsprof): summary: says 1482829, the costs add up to 1482191.
      {"gprof2dot/bzr.callgrind", 1'482'191, "<built-in method decompress>", 586'773},
      {"gprof2dot/bzr.callgrind", 1'482'191, "<map>", 60'243},
      {"gprof2dot/empty.callgrind", 0, "", 0},
      {"gprof2dot/googlecode-issue34.callgrind", 192'717'159'265, "wmemcmp", 20'800'536'233},
      {"gprof2dot/googlecode-issue98.callgrind", 1'356'335'734, "_int_malloc", 179'687'873},
      {"gprof2dot/googlecode-issue98.callgrind", 1'356'335'734, "luaV_execute", 130'711'647},
      {"gprof2dot/issue35.callgrind", 9'600'070'538, "cycfn2'2", 3'199'970'670},
      {"gprof2dot/issue35.callgrind", 9'600'070'538, "cycfn2", 3'199'934'654},
      {"gprof2dot/selinux.callgrind", 95'507'934'985, "avtab_insert_nonunique", 33'928'948'013},
      {"gprof2dot/xapian.callgrind", 3'243'393'764, "ChertPostList::next_in_chunk()", 1'958'907'374},
      // speedscope's samples are the spec's example: main 20, func1 100, func2 700.
      {"speedscope/callgrind.example.log", 820, "func2", 700},
      {"speedscope/callgrind.name-compression.log", 820, "func1", 100},
      {"speedscope/callgrind.subposition-compression.log", 820, "main", 20},
      {"speedscope/callgrind.multiple-event-types.log", 820, "func2", 700},
      // alpha, beta, gamma, delta: 10 each.
      {"speedscope/callgrind.cfn-reset.log", 40, "delta", 10},
  };
  for (const HandChecked& c : cases) {
    SCOPED_TRACE(c.file);
    core::Diagnostics d;
    const core::Profile p = read_file(conformance(c.file), d);
    EXPECT_EQ(p.total(0), c.total);
    if (*c.function) {
      EXPECT_EQ(self_cost(p, c.function), c.self) << c.function;
    }
  }
}

TEST(CallgrindConformance, MultipleEventsAndLongNames) {
  core::Diagnostics d;
  // googlecode-issue34: its totals: line gives all nine events.
  const core::Profile issue34 = read_file(conformance("gprof2dot/googlecode-issue34.callgrind"), d);
  ASSERT_EQ(issue34.sample_types.size(), 9u);
  const std::vector<int64_t> totals = {192717159265, 64592858456, 41880232760, 9202071, 127695919,
                                       4750724,      3468,        44754,       10930};
  for (size_t k = 0; k < 9; ++k) EXPECT_EQ(issue34.total(k), totals[k]) << k;
  EXPECT_TRUE(issue34.call_graph.has_instr);
  // speedscope's xdebug file: Memory_(bytes) 15000 + 15000 + 8000 self.
  const core::Profile xdebug = read_file(conformance("speedscope/callgrind.multiple-event-types.log"), d);
  ASSERT_EQ(xdebug.sample_types.size(), 2u);
  EXPECT_EQ(xdebug.total(1), 38'000);
  EXPECT_EQ(self_cost(xdebug, "main", 1), 15'000);
  // main -> func2: calls=3, inclusive 400 and 3000.
  EXPECT_EQ(calls_between(xdebug, "main", "func2", 1).inclusive, 3'000);
  EXPECT_EQ(calls_between(xdebug, "main", "func2").count, 3);
}

TEST(CallgrindConformance, SpeedscopeEdges) {
  // The spec's example: main -> func1 (1 call, 400), main -> func2 (3, 400),
  // func1 -> func2 (2, 300), in all three compressions.
  for (const char* name : {"speedscope/callgrind.example.log", "speedscope/callgrind.name-compression.log",
                           "speedscope/callgrind.subposition-compression.log"}) {
    SCOPED_TRACE(name);
    core::Diagnostics d;
    const core::Profile p = read_file(conformance(name), d);
    EXPECT_EQ(calls_between(p, "main", "func1").count, 1);
    EXPECT_EQ(calls_between(p, "main", "func1").inclusive, 400);
    EXPECT_EQ(calls_between(p, "main", "func2").count, 3);
    EXPECT_EQ(calls_between(p, "main", "func2").inclusive, 400);
    EXPECT_EQ(calls_between(p, "func1", "func2").count, 2);
    EXPECT_EQ(calls_between(p, "func1", "func2").inclusive, 300);
  }
  // cfn-reset: alpha calls beta 10, gamma 10, delta 20; delta calls gamma 10.
  core::Diagnostics d;
  const core::Profile p = read_file(conformance("speedscope/callgrind.cfn-reset.log"), d);
  EXPECT_EQ(calls_between(p, "alpha", "beta").inclusive, 10);
  EXPECT_EQ(calls_between(p, "alpha", "gamma").inclusive, 10);
  EXPECT_EQ(calls_between(p, "alpha", "delta").inclusive, 20);
  EXPECT_EQ(calls_between(p, "delta", "gamma").inclusive, 10);
  EXPECT_EQ(p.call_graph.calls.size(), 4u);
}

}  // namespace
}  // namespace tally::callgrind::test
