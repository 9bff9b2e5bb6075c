// `tally flame`: stacks merged into a tree (exact values and layout offsets on hand-built
// profiles), pruning of frames too narrow to draw, and the SVG: well-formed XML (parsed by
// python3's xml.dom.minidom), the right widths and shares, deterministic, small on a
// profile with 100k unique stacks.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "analyze/flame_svg.h"
#include "analyze/flame_tree.h"
#include "core/profile.h"
#include "support/test_support.h"

namespace tally::analyze {
namespace {

// A profile with types samples/count and cpu/nanoseconds (cpu = 10 * samples) whose
// stacks are given root first by function name, one location per function.
class ProfileBuilder {
 public:
  ProfileBuilder() {
    p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  }
  core::LocationId location(const std::string& name) {
    for (size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == name) return static_cast<core::LocationId>(i + 1);
    const core::FunctionId f = p.add_function({.name = p.intern(name)});
    names_.push_back(name);
    return p.add_location({.address = 0x1000 + names_.size(), .lines = {{.function = f}}});
  }
  void sample(const std::vector<std::string>& root_first, int64_t count) {
    std::vector<core::LocationId> stack;
    for (auto it = root_first.rbegin(); it != root_first.rend(); ++it)
      stack.push_back(location(*it));
    const int64_t values[] = {count, count * 10};
    p.add_sample(stack, values);
  }
  core::Profile p;

 private:
  std::vector<std::string> names_;
};

FlameTreeOptions by(const std::string& sample_index) {
  FlameTreeOptions o;
  o.sample_index = sample_index;
  return o;
}

FlameSvgOptions titled(const std::string& title) {
  FlameSvgOptions o;
  o.title = title;
  return o;
}

struct Row {
  std::string name;
  uint32_t depth;
  int64_t value, start;
  uint32_t merged;
  bool operator==(const Row&) const = default;
};
std::ostream& operator<<(std::ostream& o, const Row& r) {
  return o << r.name << " d" << r.depth << " v" << r.value << " s" << r.start << " m" << r.merged;
}

std::vector<Row> rows(const FlameTree& t) {
  std::vector<Row> out;
  for (const FlameFrame& f : t.frames)
    out.push_back({t.names[f.name], f.depth, f.value, f.start, f.merged_frames});
  return out;
}

ProfileBuilder small_profile() {
  ProfileBuilder b;
  b.sample({"main", "a", "b"}, 5);
  b.sample({"main", "c"}, 2);
  b.sample({"main", "a"}, 3);
  b.sample({"main", "a", "b"}, 1);  // the same stack again: merged with the first
  return b;
}

TEST(FlameTree, MergesStacksRootFirstWithChildrenByName) {
  ProfileBuilder b = small_profile();
  auto t = build_flame_tree(b.p, by("samples"));
  ASSERT_TRUE(t) << t.error().message;
  // main = 5+2+3+1; a = 5+3+1 at offset 0, its child b = 5+1; c = 2 after a (offset 9).
  EXPECT_EQ(rows(*t), (std::vector<Row>{{"all", 0, 11, 0, 0},
                                        {"main", 1, 11, 0, 0},
                                        {"a", 2, 9, 0, 0},
                                        {"b", 3, 6, 0, 0},
                                        {"c", 2, 2, 9, 0}}));
  EXPECT_EQ(t->max_depth(), 3u);
  EXPECT_EQ(t->frames[3].parent, 2u);
  EXPECT_EQ(t->frames[4].parent, 1u);
}

TEST(FlameTree, SampleIndexPicksTheWidths) {
  ProfileBuilder b = small_profile();
  auto t = build_flame_tree(b.p, by("cpu"));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->total(), 110);
  EXPECT_EQ(t->frames[4].value, 20);  // c: 2 samples * 10
  EXPECT_EQ(t->sample_type, "cpu");
  EXPECT_EQ(t->sample_unit, "nanoseconds");
}

TEST(FlameTree, SkipsSamplesWithoutPositiveValue) {
  ProfileBuilder b = small_profile();
  b.sample({"main", "z"}, 0);
  b.sample({"main", "y"}, -4);
  auto t = build_flame_tree(b.p, by("samples"));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->total(), 11);
  EXPECT_EQ(t->frames.size(), 5u);
}

TEST(FlameTree, InlineFramesSitAboveTheFunctionTheyWereInlinedInto) {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count")};
  const auto outer = p.add_function({.name = p.intern("outer")});
  const auto inl = p.add_function({.name = p.intern("inlined")});
  const auto loc = p.add_location({.address = 0x10, .lines = {{.function = inl}, {.function = outer}}});
  const core::LocationId stack[] = {loc};
  const int64_t v[] = {7};
  p.add_sample(stack, v);
  auto t = build_flame_tree(p, {});
  ASSERT_TRUE(t);
  EXPECT_EQ(rows(*t), (std::vector<Row>{{"all", 0, 7, 0, 0},
                                        {"outer", 1, 7, 0, 0},
                                        {"inlined", 2, 7, 0, 0}}));
  FlameTreeOptions no_inlines;
  no_inlines.nodes.inlines = false;
  auto flat = build_flame_tree(p, no_inlines);
  ASSERT_TRUE(flat);
  EXPECT_EQ(rows(*flat), (std::vector<Row>{{"all", 0, 7, 0, 0}, {"outer", 1, 7, 0, 0}}));
}

TEST(FlameTree, FocusAndHideFilterTheStacks) {
  ProfileBuilder b = small_profile();
  FlameTreeOptions focus = by("samples");
  focus.filters.focus = "^c$";
  auto t = build_flame_tree(b.p, focus);
  ASSERT_TRUE(t);
  EXPECT_EQ(rows(*t), (std::vector<Row>{{"all", 0, 2, 0, 0}, {"main", 1, 2, 0, 0},
                                        {"c", 2, 2, 0, 0}}));
  FlameTreeOptions hide = by("samples");
  hide.filters.hide = "^a$";
  auto h = build_flame_tree(b.p, hide);
  ASSERT_TRUE(h);
  // Without a: main > b (6) and main > c (2); main keeps a's own 3.
  EXPECT_EQ(rows(*h), (std::vector<Row>{{"all", 0, 11, 0, 0},
                                        {"main", 1, 11, 0, 0},
                                        {"b", 2, 6, 0, 0},
                                        {"c", 2, 2, 6, 0}}));
}

TEST(FlameTree, RefusesCallGraphProfiles) {
  ProfileBuilder b = small_profile();
  b.p.call_graph.present = true;
  auto t = build_flame_tree(b.p, {});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().kind, core::ErrorKind::unsupported);
}

TEST(FlameTree, PruningFoldsNarrowFramesIntoTheirParent) {
  ProfileBuilder b;
  b.sample({"main", "x", "z"}, 990);
  b.sample({"main", "x", "y", "y2"}, 4);
  b.sample({"main", "t"}, 2);
  b.sample({"main", "u"}, 4);
  auto t = build_flame_tree(b.p, by("samples"));
  ASSERT_TRUE(t);
  ASSERT_EQ(t->frames.size(), 8u);
  prune_flame_tree(*t, 5);
  // y (4, with y2) goes into x; t (2) and u (4) into main. Widths stay.
  EXPECT_EQ(rows(*t), (std::vector<Row>{{"all", 0, 1000, 0, 0},
                                        {"main", 1, 1000, 0, 2},
                                        {"x", 2, 994, 0, 2},
                                        {"z", 3, 990, 0, 0}}));
  EXPECT_EQ(t->merged_frames, 4u);
}

TEST(FlameTree, PruningWhileBuildingGivesTheSameTree) {
  ProfileBuilder b;
  b.sample({"main", "x", "z"}, 990);
  b.sample({"main", "x", "y", "y2"}, 4);
  b.sample({"main", "t"}, 2);
  b.sample({"main", "u"}, 4);
  FlameTreeOptions options = by("samples");
  options.min_fraction = 0.005;  // 5 of 1000
  auto t = build_flame_tree(b.p, options);
  ASSERT_TRUE(t);
  EXPECT_EQ(rows(*t), (std::vector<Row>{{"all", 0, 1000, 0, 0},
                                        {"main", 1, 1000, 0, 2},
                                        {"x", 2, 994, 0, 2},
                                        {"z", 3, 990, 0, 0}}));
  EXPECT_EQ(t->merged_frames, 4u);
}

TEST(FlameTree, MinFrameValueIsATenthOfAPixel) {
  // 1180 usable pixels (1200 minus 10 px each side): 0.1 px is total / 11800.
  EXPECT_EQ(min_frame_value(11800, {}), 1);
  EXPECT_EQ(min_frame_value(118000, {}), 10);
  EXPECT_EQ(min_frame_value(118001, {}), 11);
}

std::string write_temp(const test::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

void expect_well_formed_xml(const std::string& path) {
  auto r = test::run({"python3", "-c",
                      "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(FlameSvg, WidthsSharesAndEscaping) {
  ProfileBuilder b = small_profile();
  b.sample({"main", "operator<<(std::ostream&, \"x\")"}, 11);
  auto t = build_flame_tree(b.p, by("samples"));
  ASSERT_TRUE(t);
  const std::string svg = render_flame_svg(*t, titled("A & B"));
  // Total 22 over 1180 px; main's children by name: a, c, operator<<. a (9) starts at
  // x = 10 and is 9/22*1180 = 482.73 px wide; depth 2 of 3 is at y = 60 + (3-2)*16.
  EXPECT_NE(svg.find("<title>a (9, 40.91%)</title><rect x=\"10.00\" y=\"76\" width=\"482.73\""),
            std::string::npos);
  // c (2) after a: x = 10 + 9/22*1180 = 492.73, width 107.27.
  EXPECT_NE(svg.find("<rect x=\"492.73\" y=\"76\" width=\"107.27\""), std::string::npos);
  EXPECT_NE(svg.find("operator&lt;&lt;(std::ostream&amp;, &quot;x&quot;) (11, 50.00%)"),
            std::string::npos);
  EXPECT_NE(svg.find(">A &amp; B</text>"), std::string::npos);
  EXPECT_NE(svg.find("data-tally-ready"), std::string::npos);
  test::TempDir dir;
  expect_well_formed_xml(write_temp(dir, "small.svg", svg));
}

TEST(FlameCommand, SplitFixtureHottestFunctionAndDeterminism) {
  test::TempDir dir;
  const std::string fixture = test::shared("fixtures/gperf/split.pb.gz");
  auto r = test::run_tally({"flame", fixture, "-o", dir.file("a.svg")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = test::read_text(dir.file("a.svg"));
  // split.pb.pprof-top.txt: func_a 111ms, 40.22% of 276ms; every stack runs through main.
  EXPECT_NE(svg.find("<title>func_a (111ms, 40.22%)</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>main (276ms, 100.00%)</title>"), std::string::npos);
  expect_well_formed_xml(dir.file("a.svg"));
  auto again = test::run_tally({"flame", fixture, "-o", "-"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, svg);
  // --sample-index samples: 111 of 276 samples, the same share.
  auto samples = test::run_tally({"flame", "--sample-index", "samples", "--title", "split",
                                  fixture, "-o", "-"});
  ASSERT_EQ(samples.exit_code, 0) << samples.err;
  EXPECT_NE(samples.out.find("<title>func_a (111, 40.22%)</title>"), std::string::npos);
}

TEST(FlameCommand, RefusesCallgrindWithExit4) {
  auto r = test::run_tally(
      {"flame", test::shared("fixtures/callgrind/callgrind.out.deep.default"), "-o", "-"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("call-graph profile"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(FlameCommand, HundredThousandUniqueStacksGiveASmallSvg) {
  // Folded stacks: 100 subsystems x 1000 leaves under a 6-frame spine, plus one hot path
  // that takes half of the samples. 100k unique stacks, 100k+ frames before pruning.
  std::string folded;
  for (int i = 0; i < 100000; ++i)
    folded += "main;loop;dispatch;work;step;handle;sub" + std::to_string(i % 100) + ";leaf" +
              std::to_string(i) + " 1\n";
  folded += "main;loop;hot 100000\n";
  test::TempDir dir;
  const std::string in = write_temp(dir, "big.folded", folded);
  auto r = test::run_tally({"flame", in, "-o", dir.file("big.svg")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = test::read_text(dir.file("big.svg"));
  EXPECT_LT(svg.size(), 3u * 1024 * 1024);
  // The total is 200000; 0.1 px of 1180 is 17 samples: every leaf (1) is merged, every
  // sub (1000) stays. The 100000 leaves are folded into the 100 subs.
  EXPECT_NE(svg.find("100000 tiny frames merged"), std::string::npos);
  EXPECT_NE(svg.find("<title>hot (100000, 50.00%)</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>sub7 (1000, 0.50%, 1000 tiny frames merged)</title>"),
            std::string::npos);
  expect_well_formed_xml(dir.file("big.svg"));
}

}  // namespace
}  // namespace tally::analyze
