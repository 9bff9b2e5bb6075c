// The writer: every real file survives read -> write -> read with the same model (compared
// through ModelView, not as text) under each compression setting; the layout rules of the
// output; stack profiles -> call graph by pprof's rule, on hand-built profiles whose edges
// are worked out by hand below; call graph -> stacks.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "callgrind_model_view.h"
#include "callgrind_test_helpers.h"

namespace tally::callgrind::test {
namespace {

std::vector<std::string> every_callgrind_file() {
  std::vector<std::string> files = callgrind_files("conformance/callgrind");
  for (const std::string& path : callgrind_files("fixtures/callgrind"))
    if (std::filesystem::path(path).filename().string().starts_with("callgrind.out.")) files.push_back(path);
  return files;
}

std::string write_ok(const core::Profile& p, const WriteOptions& options, core::Diagnostics& d) {
  auto text = write_callgrind(p, options, d);
  if (!text) throw std::runtime_error("unexpected write error: " + text.error().message);
  return std::move(text).value();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// The writer always ends a part with totals: (the sum of its self costs); a file that had
// none gets one, so the expected view has it too.
ModelView with_written_totals(ModelView v) {
  for (size_t k = 0; k < v.parts.size(); ++k) {
    if (!v.parts[k].totals.empty()) continue;
    std::vector<int64_t> sum(v.sample_types.size(), 0);
    for (const auto& [key, values] : v.self) {
      const int64_t part = v.parts.size() == 1 ? 0 : static_cast<int64_t>(k + 1);
      if (key.first != part) continue;
      for (size_t i = 0; i < values.size() && i < sum.size(); ++i) sum[i] += values[i];
    }
    v.parts[k].totals = sum;
  }
  return v;
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, ReadWriteReadKeepsTheModelUnderEveryCompression) {
  const std::string path = GetParam();
  core::Diagnostics d;
  const core::Profile original = read_file(path, d);
  const ModelView expected = with_written_totals(view_of(original));
  std::map<std::pair<bool, bool>, std::string> texts;
  for (bool names : {true, false}) {
    for (bool positions : {true, false}) {
      const std::string what = fmt::format("compress_names={} compress_positions={}", names, positions);
      SCOPED_TRACE(what);
      core::Diagnostics wd;
      const std::string text = write_ok(original, WriteOptions{names, positions}, wd);
      texts[{names, positions}] = text;
      core::Diagnostics rd;
      auto again = read_profile(bytes_of(text), "rewritten", rd);
      ASSERT_TRUE(again) << again.error().message;
      expect_same_view(expected, view_of(*again), what);
      // tally's own output is consistent: no totals:/summary: complaints when read back.
      for (const std::string& w : rd.warnings()) EXPECT_EQ(w.find("totals:"), std::string::npos) << w;
    }
  }
  // Compression changes the text, not the model; and it makes the file smaller, except
  // in files of a few lines where each name is used once or twice ("(1) " then costs more
  // than it saves: speedscope's 5 samples) or where there is nothing to compress.
  if (original.sample_count() >= 20) {
    const std::string& smallest = texts[{true, true}];
    const std::string& names_only = texts[{true, false}];
    const std::string& largest = texts[{false, false}];
    EXPECT_NE(smallest, largest);
    EXPECT_LT(smallest.size(), largest.size());
    EXPECT_LT(names_only.size(), largest.size());
  }
}

TEST_P(RoundTrip, LayoutOfTheOutput) {
  core::Diagnostics d;
  const core::Profile p = read_file(GetParam(), d);
  const std::string text = write_ok(p, {}, d);
  EXPECT_TRUE(text.starts_with("# callgrind format\n"));
  const std::vector<std::string> lines = lines_of(text);
  const std::string positions = p.call_graph.has_instr ? "positions: instr line" : "positions: line";
  EXPECT_NE(std::find(lines.begin(), lines.end(), positions), lines.end()) << positions;
  // totals: ends every part: one per part, the last line of the file, and after each only
  // blank lines before the next part's header lines.
  size_t totals_lines = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].starts_with("totals:")) continue;
    ++totals_lines;
    size_t next = i + 1;
    while (next < lines.size() && lines[next].empty()) ++next;
    if (next == lines.size()) continue;
    const std::string& l = lines[next];
    EXPECT_TRUE(l.starts_with("part:") || l.starts_with("pid:") || l.starts_with("thread:"))
        << "after totals: comes " << l;
  }
  EXPECT_EQ(totals_lines, std::max<size_t>(p.call_graph.parts.size(), 1));
  size_t last = lines.size();
  while (last > 0 && lines[last - 1].empty()) --last;
  ASSERT_GT(last, 0u);
  EXPECT_TRUE(lines[last - 1].starts_with("totals:")) << lines[last - 1];
}

INSTANTIATE_TEST_SUITE_P(Files, RoundTrip, ::testing::ValuesIn(every_callgrind_file()),
                         file_param_name);

TEST(CallgrindWriter, ConcatenatedPartsRoundTrip) {
  // Several parts in one file (no real file has them): labels "part" 1..3 and each part's
  // header come back.
  std::string text;
  for (const char* name : {"callgrind.out.split.dumps.1", "callgrind.out.split.dumps.2",
                           "callgrind.out.split.dumps.3"})
    text += tally::test::read_text(tally::test::shared(std::string("fixtures/callgrind/") + name));
  core::Diagnostics d;
  const core::Profile p = read_ok(text, d);
  ASSERT_EQ(p.call_graph.parts.size(), 3u);
  for (bool names : {true, false}) {
    for (bool positions : {true, false}) {
      const std::string out = write_ok(p, WriteOptions{names, positions}, d);
      expect_same_view(view_of(p), view_of(read_ok(out, d)), "parts");
    }
  }
}

TEST(CallgrindWriter, CompressionIsWhatTheOptionsSay) {
  core::Diagnostics d;
  const core::Profile p = read_file(
      tally::test::shared("fixtures/callgrind/callgrind.out.split.instr-line"), d);
  const std::string compressed = write_ok(p, {true, true}, d);
  const std::string plain = write_ok(p, {false, false}, d);
  // Names: "fn=(N) name" once then "fn=(N)"; never an "(N)" when off ("(below main)" is
  // a name).
  auto compressed_refs = [](const std::string& text) {
    size_t n = 0;
    for (const std::string& l : lines_of(text)) {
      const size_t open = l.find("=(");
      if (open == std::string::npos || open > 4) continue;
      const size_t close = l.find(')', open);
      n += close != std::string::npos && close > open + 2 &&
           l.find_first_not_of("0123456789", open + 2) == close;
    }
    return n;
  };
  EXPECT_GT(compressed_refs(compressed), 100u);
  EXPECT_EQ(compressed_refs(plain), 0u);
  // Positions: "+N"/"-N"/"*" only when on (hex addresses start with 0x when absolute).
  size_t relative = 0;
  for (const std::string& l : lines_of(compressed)) relative += l.starts_with("+") || l.starts_with("-");
  EXPECT_GT(relative, 0u);
  for (const std::string& l : lines_of(plain))
    EXPECT_FALSE(l.starts_with("+") || l.starts_with("-") || l.starts_with("*")) << l;
}

TEST(CallgrindWriter, NegativeCostsAreRefusedNotMisread) {
  // Callgrind costs are unsigned (valgrind, KCachegrind and callgrind_annotate read digits
  // only), and "-5" on a cost line means "5 less than the previous line" to readers of
  // speedscope's compressed costs, tally's included. A negative value (a diff profile) must
  // not come back as another number.
  for (bool on_edge : {false, true}) {
    core::Diagnostics d;
    core::Profile p = read_ok("events: Ir\nfn=f\n1 10\n2 20\ncfn=g\ncalls=1 1\n2 7\nfn=g\n1 7\n", d);
    if (on_edge)
      p.call_graph.calls[0].inclusive[0] = -7;
    else
      p.values(1)[0] = -20;
    auto text = write_callgrind(p, {}, d);
    ASSERT_FALSE(text) << "written as:\n" << *text;
    EXPECT_EQ(text.error().message, "callgrind: costs are unsigned, and 1 value (the first of Ir) "
                                    "is negative");
  }
}

// --- stacks -> call graph, by hand ---

struct StackProfile {
  core::Profile p;
  core::LocationId main = 0, f1 = 0, f2 = 0, g = 0;
};

// main (m.c:5) calls f (f.c:10 and f.c:12), which calls g (g.c:20); addresses known.
StackProfile stack_profile(bool with_sample_count) {
  StackProfile s;
  core::Profile& p = s.p;
  if (with_sample_count) p.sample_types.push_back(p.value_type("samples", "count"));
  p.sample_types.push_back(p.value_type("cpu", "nanoseconds"));
  const core::MappingId exe = p.add_mapping({0x1000, 0x2000, 0, p.intern("/bin/app"), 0});
  auto fn = [&](const char* name, const char* file) {
    return p.add_function({p.intern(name), p.intern(name), p.intern(file), 0});
  };
  const core::FunctionId main = fn("main", "m.c"), f = fn("f", "f.c"), g = fn("g", "g.c");
  auto loc = [&](uint64_t addr, core::FunctionId function, int64_t line) {
    core::Location l;
    l.mapping = exe;
    l.address = addr;
    l.lines.push_back({function, line, 0});
    return p.add_location(std::move(l));
  };
  s.main = loc(0x1100, main, 5);
  s.f1 = loc(0x1200, f, 10);
  s.f2 = loc(0x1210, f, 12);
  s.g = loc(0x1300, g, 20);
  auto sample = [&](std::vector<core::LocationId> stack, int64_t n, std::vector<core::Label> labels = {}) {
    std::vector<int64_t> values;
    if (with_sample_count) values.push_back(n);
    values.push_back(n * 10);
    p.add_sample(stack, values, labels);
  };
  sample({s.g, s.f1, s.main}, 2);
  sample({s.f1, s.main}, 1, {core::Label{p.intern("thread"), p.intern("worker"), 0, 0}});
  sample({s.f1, s.f1, s.f1, s.main}, 3);      // recursion at one position: no f -> f edge
  sample({s.g, s.f2, s.g, s.f1, s.main}, 4);  // g calls back into f at another line
  sample({s.g, s.f1, s.g, s.f1, s.main}, 5);  // f1 -> g twice on one stack: counted once
  sample({s.g, s.main}, 0);                   // zero: neither cost nor edge
  return s;
}

// The edge between two positions (by their key), or a zero edge.
EdgeView edge(const ModelView& v, const std::string& caller, const std::string& callee) {
  auto it = v.calls.find({0, caller, callee});
  return it == v.calls.end() ? EdgeView{} : it->second;
}

TEST(CallGraphFromStacks, HandComputedEdgesWithASampleCount) {
  StackProfile s = stack_profile(true);
  core::Diagnostics d;
  auto graph = call_graph_from_stacks(s.p, d);
  ASSERT_TRUE(graph);
  ASSERT_TRUE(graph->call_graph.present);
  EXPECT_TRUE(graph->call_graph.has_instr);
  const ModelView v = view_of(*graph);
  const std::string m = position_key(s.p, s.main), f1 = position_key(s.p, s.f1),
                    f2 = position_key(s.p, s.f2), g = position_key(s.p, s.g);
  // Self costs are the leaves: g = 2 + 4 + 5 samples, f1 = 1 + 3; f2 never a leaf.
  EXPECT_EQ(v.self.at({0, g}), (std::vector<int64_t>{11, 110}));
  EXPECT_EQ(v.self.at({0, f1}), (std::vector<int64_t>{4, 40}));
  EXPECT_EQ(v.self.count({0, f2}), 0u);
  EXPECT_EQ(v.self.size(), 2u);
  EXPECT_EQ(v.totals, (std::vector<int64_t>{15, 150}));
  // Edges (count = samples through it, inclusive = their values, once per sample):
  //   main -> f1: every non-zero sample, 2+1+3+4+5 = 15
  //   f1 -> g: samples 1, 4 and 5 (twice on its stack, once counted) = 2+4+5 = 11
  //   g -> f2, f2 -> g: sample 4;  g -> f1: sample 5;  f1 -> f1: never.
  EXPECT_EQ(edge(v, m, f1), (EdgeView{15, {15, 150}}));
  EXPECT_EQ(edge(v, f1, g), (EdgeView{11, {11, 110}}));
  EXPECT_EQ(edge(v, g, f2), (EdgeView{4, {4, 40}}));
  EXPECT_EQ(edge(v, f2, g), (EdgeView{4, {4, 40}}));
  EXPECT_EQ(edge(v, g, f1), (EdgeView{5, {5, 50}}));
  EXPECT_EQ(edge(v, f1, f1), EdgeView{});
  EXPECT_EQ(v.calls.size(), 5u);
  EXPECT_TRUE(warned(d, "labels of 1 sample dropped"));
}

TEST(CallGraphFromStacks, WithoutASampleCountEachSampleIsOneCall) {
  StackProfile s = stack_profile(false);
  core::Diagnostics d;
  auto graph = call_graph_from_stacks(s.p, d);
  ASSERT_TRUE(graph);
  const ModelView v = view_of(*graph);
  const std::string m = position_key(s.p, s.main), f1 = position_key(s.p, s.f1),
                    g = position_key(s.p, s.g);
  EXPECT_EQ(edge(v, m, f1), (EdgeView{5, {150}}));   // 5 non-zero samples
  EXPECT_EQ(edge(v, f1, g), (EdgeView{3, {110}}));   // samples 1, 4, 5
  EXPECT_EQ(edge(v, g, f1), (EdgeView{1, {50}}));
}

TEST(CallGraphFromStacks, InlineFramesArePositionsOfTheirOwn) {
  // One location holding h inlined into f (innermost first), called from main.
  core::Profile p;
  p.sample_types.push_back(p.value_type("samples", "count"));
  const core::FunctionId main = p.add_function({p.intern("main"), 0, p.intern("m.c"), 0});
  const core::FunctionId f = p.add_function({p.intern("f"), 0, p.intern("f.c"), 0});
  const core::FunctionId h = p.add_function({p.intern("h"), 0, p.intern("h.h"), 0});
  core::Location inl;
  inl.address = 0x40;
  inl.lines = {{h, 3, 0}, {f, 12, 0}};
  const core::LocationId both = p.add_location(inl);
  core::Location caller;
  caller.address = 0x10;
  caller.lines = {{main, 5, 0}};
  const core::LocationId m = p.add_location(caller);
  const std::vector<core::LocationId> stack = {both, m};
  const std::vector<int64_t> seven = {7};
  p.add_sample(stack, seven);
  core::Diagnostics d;
  auto graph = call_graph_from_stacks(p, d);
  ASSERT_TRUE(graph);
  EXPECT_EQ(self_cost(*graph, "h"), 7);
  EXPECT_EQ(self_cost(*graph, "f"), 0);
  EXPECT_EQ(calls_between(*graph, "main", "f").inclusive, 7);
  EXPECT_EQ(calls_between(*graph, "f", "h").inclusive, 7);
  EXPECT_EQ(calls_between(*graph, "f", "h").count, 7);
  EXPECT_EQ(graph->call_graph.calls.size(), 2u);
}

TEST(CallGraphFromStacks, AStackProfileIsWrittenAsItsCallGraph) {
  StackProfile s = stack_profile(true);
  core::Diagnostics d;
  auto graph = call_graph_from_stacks(s.p, d);
  ASSERT_TRUE(graph);
  core::Diagnostics wd;
  const std::string text = write_ok(s.p, {}, wd);
  EXPECT_TRUE(warned(wd, "labels of 1 sample dropped"));
  EXPECT_NE(text.find("\npositions: instr line\n"), std::string::npos);
  expect_same_view(with_written_totals(view_of(*graph)), view_of(read_ok(text, d)), "stacks");
}

TEST(CallGraphFromStacks, ACallGraphComesBackUnchanged) {
  core::Diagnostics d;
  const core::Profile p =
      read_file(tally::test::shared("fixtures/callgrind/callgrind.out.split.default"), d);
  auto again = call_graph_from_stacks(p, d);
  ASSERT_TRUE(again);
  expect_same_view(view_of(p), view_of(*again), "call graph");
}

// --- call graph -> stacks ---

TEST(ApproximateStacks, EachSelfCostIsAOneFrameStackAndTheLossIsSaid) {
  core::Diagnostics d;
  const core::Profile p =
      read_file(tally::test::shared("fixtures/callgrind/callgrind.out.split.jumps"), d);
  ASSERT_FALSE(p.call_graph.calls.empty());
  ASSERT_FALSE(p.call_graph.jumps.empty());
  core::Diagnostics ad;
  auto stacks = approximate_stacks(p, ad);
  ASSERT_TRUE(stacks);
  EXPECT_FALSE(stacks->call_graph.present);
  EXPECT_TRUE(stacks->call_graph.calls.empty());
  EXPECT_TRUE(stacks->call_graph.jumps.empty());
  ASSERT_EQ(stacks->sample_count(), p.sample_count());
  for (size_t i = 0; i < stacks->sample_count(); ++i) EXPECT_EQ(stacks->stack(i).size(), 1u);
  EXPECT_EQ(stacks->total(0), 101'737'433);  // PROGRAM TOTALS of its .annotate.txt
  EXPECT_EQ(self_cost(*stacks, "func_a", 0, "/tally/workloads/split.cc"), 40'000'020);
  ASSERT_EQ(ad.warnings().size(), 1u);
  const std::string& w = ad.warnings()[0];
  EXPECT_NE(w.find(fmt::format("{} call edges", p.call_graph.calls.size())), std::string::npos) << w;
  EXPECT_NE(w.find(fmt::format("{} jumps", p.call_graph.jumps.size())), std::string::npos) << w;
  EXPECT_NE(w.find("dropped"), std::string::npos) << w;
}

TEST(ApproximateStacks, AStackProfileComesBackUnchanged) {
  StackProfile s = stack_profile(true);
  core::Diagnostics d;
  auto same = approximate_stacks(s.p, d);
  ASSERT_TRUE(same);
  EXPECT_TRUE(d.warnings().empty());
  ASSERT_EQ(same->sample_count(), s.p.sample_count());
  for (size_t i = 0; i < s.p.sample_count(); ++i) {
    EXPECT_TRUE(std::ranges::equal(same->stack(i), s.p.stack(i)));
    EXPECT_TRUE(std::ranges::equal(same->values(i), s.p.values(i)));
  }
}

}  // namespace
}  // namespace tally::callgrind::test
