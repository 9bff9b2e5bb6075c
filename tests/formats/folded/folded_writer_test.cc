// core::Profile -> folded text, on profiles built by hand with the core::Profile API; every
// expected line is written out by hand.
#include <gtest/gtest.h>

#include <limits>

#include "folded_test_helpers.h"

namespace tally::folded::test {
namespace {

bool has_warning(const core::Diagnostics& d, std::string_view text) {
  for (const std::string& w : d.warnings())
    if (w.find(text) != std::string::npos) return true;
  return false;
}

TEST(FoldedWriter, RootFirstSortedAndIdenticalStacksSummed) {
  ProfileMaker m;
  auto main = m.named("main"), a = m.named("a"), b = m.named("b"), c = m.named("c");
  m.sample({b, a, main}, {5});
  m.sample({c, a, main}, {3});
  m.sample({b, a, main}, {2});  // the same stack again, not merged in the model
  m.sample({a, main}, {1});
  EXPECT_EQ(write_ok(m.p), "main;a 1\nmain;a;b 7\nmain;a;c 3\n");
}

TEST(FoldedWriter, LinesAreSortedBytewise) {
  ProfileMaker m;
  auto upper = m.named("Zeta"), under = m.named("_x"), lower = m.named("alpha");
  m.sample({lower}, {1});
  m.sample({under}, {2});
  m.sample({upper}, {3});
  // 'Z' (0x5a) < '_' (0x5f) < 'a' (0x61), as `LC_ALL=C sort` orders them.
  EXPECT_EQ(write_ok(m.p), "Zeta 3\n_x 2\nalpha 1\n");
}

TEST(FoldedWriter, ZeroAndNegativeValuesAreSkippedNegativesWithAWarning) {
  ProfileMaker m;
  auto a = m.named("a"), b = m.named("b"), c = m.named("c");
  m.sample({a}, {0});
  m.sample({b}, {-4});
  m.sample({c}, {2});
  core::Diagnostics d;
  EXPECT_EQ(write_ok(m.p, 0, d), "c 2\n");
  EXPECT_TRUE(has_warning(d, "1 samples with a negative 'samples/count' value skipped"));
}

TEST(FoldedWriter, ValueIndexChoosesTheSampleTypeAndTheOthersAreReportedDropped) {
  ProfileMaker m({{"samples", "count"}, {"cpu", "nanoseconds"}});
  auto main = m.named("main"), f = m.named("f");
  m.sample({f, main}, {3, 3000000});
  m.sample({main}, {1, 1000000});
  core::Diagnostics d0, d1;
  EXPECT_EQ(write_ok(m.p, 0, d0), "main 1\nmain;f 3\n");
  EXPECT_EQ(write_ok(m.p, 1, d1), "main 1000000\nmain;f 3000000\n");
  EXPECT_TRUE(has_warning(d0, "wrote 'samples/count', dropped 'cpu/nanoseconds'"));
  EXPECT_TRUE(has_warning(d1, "wrote 'cpu/nanoseconds', dropped 'samples/count'"));
}

TEST(FoldedWriter, ValueIndexOutOfRangeIsAnError) {
  ProfileMaker m;
  m.sample({m.named("a")}, {1});
  core::Diagnostics d;
  auto out = write_folded(m.p, 1, d);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().kind, core::ErrorKind::unsupported);
  EXPECT_EQ(out.error().message, "cannot write folded stacks of value 1: the profile has 1 sample type");
}

TEST(FoldedWriter, InlineFramesExpandOutermostFirst) {
  ProfileMaker m;
  auto main = m.named("main");
  // One address, three functions: leaf_inlined was inlined into mid_inlined, which was
  // inlined into outer. Lines are innermost first.
  auto inl = m.location({m.function("leaf_inlined"), m.function("mid_inlined"), m.function("outer")},
                        0x1234);
  m.sample({inl, main}, {4});
  EXPECT_EQ(write_ok(m.p), "main;outer;mid_inlined;leaf_inlined 4\n");
}

TEST(FoldedWriter, LocationsWithoutFunctionsAreNamedByAddress) {
  ProfileMaker m;
  const core::MappingId lib = m.p.add_mapping(
      {0x7f0000001000, 0x7f0000009000, 0x2000, m.p.intern("/usr/lib/libfoo.so.1"), 0});
  const core::MappingId anonymous = m.p.add_mapping({0x5000, 0x6000, 0, 0, 0});
  auto main = m.named("main");
  auto in_lib = m.location({}, 0x7f0000001234, lib);        // 0x234 into the map, + 0x2000
  auto no_mapping = m.location({}, 0x4242);
  auto nameless_mapping = m.location({}, 0x5010, anonymous);
  auto nothing = m.location({});
  m.sample({in_lib, main}, {1});
  m.sample({no_mapping, main}, {2});
  m.sample({nameless_mapping, main}, {3});
  m.sample({nothing, main}, {4});
  EXPECT_EQ(write_ok(m.p), "main;0x4242 2\nmain;0x5010 3\nmain;[libfoo.so.1+0x2234] 1\nmain;[unknown] 4\n");
}

TEST(FoldedWriter, FunctionWithoutNameUsesItsSystemName) {
  ProfileMaker m;
  core::Function f;
  f.system_name = m.p.intern("_Z3foov");
  auto loc = m.location({m.p.add_function(f)});
  m.sample({loc}, {1});
  EXPECT_EQ(write_ok(m.p), "_Z3foov 1\n");
}

TEST(FoldedWriter, LabelsAreDroppedWithTheirSampleCountAndTheStacksMerged) {
  ProfileMaker m;
  auto a = m.named("a"), b = m.named("b");
  const core::StringId thread = m.p.intern("thread");
  m.sample({a}, {3}, {{thread, 0, 1, 0}});
  m.sample({a}, {4}, {{thread, 0, 2, 0}});
  m.sample({b}, {1});
  core::Diagnostics d;
  EXPECT_EQ(write_ok(m.p, 0, d), "a 7\nb 1\n");
  EXPECT_TRUE(has_warning(d, "labels of 2 samples dropped"));
}

TEST(FoldedWriter, StacksThatDifferOnlyByAddressBecomeOneLine) {
  ProfileMaker m;
  auto f = m.function("func_d");
  auto first = m.location({f}, 0x1794), second = m.location({f}, 0x179a);
  m.sample({first}, {23});
  m.sample({second}, {6});
  core::Diagnostics d;
  EXPECT_EQ(write_ok(m.p, 0, d), "func_d 29\n");
  EXPECT_TRUE(has_warning(d, "addresses, mappings, files and line numbers were dropped"));
}

TEST(FoldedWriter, SamplesWithoutFramesAreDroppedWithAWarning) {
  ProfileMaker m;
  m.sample({}, {5});
  m.sample({m.named("a")}, {1});
  core::Diagnostics d;
  EXPECT_EQ(write_ok(m.p, 0, d), "a 1\n");
  EXPECT_TRUE(has_warning(d, "1 samples without frames dropped ('samples/count' total 5)"));
}

TEST(FoldedWriter, LineBreaksInNamesBecomeSpaces) {
  ProfileMaker m;
  m.sample({m.named("two\nlines\r")}, {1});
  core::Diagnostics d;
  EXPECT_EQ(write_ok(m.p, 0, d), "two lines  1\n");
  EXPECT_TRUE(has_warning(d, "1 frame names held line breaks"));
}

TEST(FoldedWriter, NamesThatWouldSplitAreReported) {
  ProfileMaker m;
  m.sample({m.named("a;b"), m.named("f<x;y>")}, {1});
  core::Diagnostics d;
  EXPECT_EQ(write_ok(m.p, 0, d), "f<x;y>;a;b 1\n");
  EXPECT_TRUE(has_warning(d, "1 frame names contain ';' outside brackets"));
}

TEST(FoldedWriter, RootFrameThatLooksLikeACommentIsReported) {
  ProfileMaker m;
  m.sample({m.named("leaf"), m.named("#root")}, {2});
  core::Diagnostics d;
  EXPECT_EQ(write_ok(m.p, 0, d), "#root;leaf 2\n");
  EXPECT_TRUE(has_warning(d, "1 stacks start with a frame beginning with '#'"));
}

TEST(FoldedWriter, LeafNumbersThatWouldReadAsASecondCountAreReported) {
  ProfileMaker m;
  m.sample({m.named("GC Thread 12"), m.named("main")}, {5});
  core::Diagnostics d;
  EXPECT_EQ(write_ok(m.p, 0, d), "main;GC Thread 12 5\n");
  EXPECT_TRUE(has_warning(d, "differential"));
  // With one other line that does not end in a number, the file reads back as meant.
  m.sample({m.named("main")}, {1});
  core::Diagnostics d2;
  EXPECT_EQ(write_ok(m.p, 0, d2), "main 1\nmain;GC Thread 12 5\n");
  EXPECT_FALSE(has_warning(d2, "differential"));
}

TEST(FoldedWriter, SumsSaturate) {
  ProfileMaker m;
  auto a = m.named("a");
  m.sample({a}, {std::numeric_limits<int64_t>::max()});
  m.sample({a}, {std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(write_ok(m.p), "a 9223372036854775807\n");
}

TEST(FoldedWriter, NoSamplesGiveEmptyOutputWithAWarning) {
  ProfileMaker m;
  core::Diagnostics d;
  EXPECT_EQ(write_ok(m.p, 0, d), "");
  EXPECT_TRUE(has_warning(d, "no samples with a 'samples/count' value above 0"));
}

TEST(FoldedWriter, ProfileReadFromFoldedTextWritesWithoutWarnings) {
  const core::Profile p = read_ok("main;a 1\nmain;b 2\n");
  core::Diagnostics d;
  (void)write_ok(p, 0, d);
  EXPECT_TRUE(d.empty()) << d.warnings()[0];
}

}  // namespace
}  // namespace tally::folded::test
