// Folded text -> core::Profile: the model the reader builds, line rules, differential
// files, and errors that name the line.
#include <gtest/gtest.h>

#include <limits>

#include "folded_test_helpers.h"

namespace tally::folded::test {
namespace {

using Samples = std::vector<StackValues>;

TEST(FoldedReader, BuildsOneFunctionAndLocationPerFrameNameWithStacksLeafFirst) {
  const core::Profile p = read_ok("main;a;b 5\nmain;a;c 3\n");
  ASSERT_EQ(p.sample_types.size(), 1u);
  EXPECT_EQ(p.str(p.sample_types[0].type), "samples");
  EXPECT_EQ(p.str(p.sample_types[0].unit), "count");
  // main, a, b, c: four names, four functions, four locations.
  ASSERT_EQ(p.functions.size(), 4u);
  ASSERT_EQ(p.locations.size(), 4u);
  for (const core::Location& l : p.locations) {
    EXPECT_EQ(l.address, 0u);
    EXPECT_EQ(l.mapping, 0u);
    ASSERT_EQ(l.lines.size(), 1u);
    const core::Function& f = p.function(l.lines[0].function);
    EXPECT_EQ(f.name, f.system_name);
  }
  EXPECT_TRUE(p.mappings.empty());
  ASSERT_EQ(p.sample_count(), 2u);
  // The file is root first, the model leaf first.
  auto first = p.stack(0);
  ASSERT_EQ(first.size(), 3u);
  auto name = [&](core::LocationId id) { return p.str(p.function(p.location(id).lines[0].function).name); };
  EXPECT_EQ(name(first[0]), "b");
  EXPECT_EQ(name(first[1]), "a");
  EXPECT_EQ(name(first[2]), "main");
  // Shared frames share the location.
  EXPECT_EQ(p.stack(1)[1], first[1]);
  EXPECT_EQ(p.stack(1)[2], first[2]);
  EXPECT_EQ(p.values(0)[0], 5);
  EXPECT_EQ(p.values(1)[0], 3);
}

TEST(FoldedReader, IdenticalStacksAreSummed) {
  const core::Profile p = read_ok("main;a 5\nmain;b 1\nmain;a 2\nmain;a 10\n");
  EXPECT_EQ(samples_of(p), (Samples{{{"main", "a"}, {17}}, {{"main", "b"}, {1}}}));
}

TEST(FoldedReader, SumsSaturateInsteadOfOverflowing) {
  const core::Profile p = read_ok("a 9223372036854775807\na 5\n");
  EXPECT_EQ(samples_of(p), (Samples{{{"a"}, {std::numeric_limits<int64_t>::max()}}}));
}

TEST(FoldedReader, ZeroCountsAreKept) {
  EXPECT_EQ(samples_of(read_ok("a;b 0\n")), (Samples{{{"a", "b"}, {0}}}));
}

TEST(FoldedReader, FramesMayContainSpacesAndTheCountFollowsTheLastRunOfBlanks) {
  const core::Profile p = read_ok(
      "java;Thread.run;Foo bar (Baz.java:12) 42\n"
      "a;b c   7\n"
      "x;y z\t\t3\n");
  EXPECT_EQ(samples_of(p), (Samples{{{"a", "b c"}, {7}},
                                    {{"java", "Thread.run", "Foo bar (Baz.java:12)"}, {42}},
                                    {{"x", "y z"}, {3}}}));
}

TEST(FoldedReader, SurroundingBlanksAreIgnored) {
  EXPECT_EQ(samples_of(read_ok("  main;a 5   \n\tmain;b 1\t\n")),
            (Samples{{{"main", "a"}, {5}}, {{"main", "b"}, {1}}}));
}

TEST(FoldedReader, TemplateAndOperatorNamesKeepTheirSemicolons) {
  const core::Profile p = read_ok(
      "main;std::map<int, std::vector<a;b>>::find;foo(int; char) 3\n"
      "main;std::operator<<(std::ostream&, int);Foo::operator()(int; long);bar 1\n"
      "main;a::operator<;b 2\n");
  EXPECT_EQ(samples_of(p),
            (Samples{{{"main", "a::operator<", "b"}, {2}},
                     {{"main", "std::map<int, std::vector<a;b>>::find", "foo(int; char)"}, {3}},
                     {{"main", "std::operator<<(std::ostream&, int)", "Foo::operator()(int; long)",
                       "bar"},
                      {1}}}));
}

TEST(FoldedReader, LineWithUnbalancedBracketsSplitsAtEverySemicolon) {
  // Only that line falls back; the next keeps its bracketed ';'.
  const core::Profile p = read_ok("a<b;c;d 1\nf<x;y>;g 2\n");
  EXPECT_EQ(samples_of(p), (Samples{{{"a<b", "c", "d"}, {1}}, {{"f<x;y>", "g"}, {2}}}));
}

TEST(FoldedReader, FlameGraphAnnotationsStayInTheNames) {
  const core::Profile p =
      read_ok("perf;[unknown];do_syscall_64_[k];Interpreter_[j];inlined_[i];waker_[w] 9\n");
  EXPECT_EQ(samples_of(p), (Samples{{{"perf", "[unknown]", "do_syscall_64_[k]", "Interpreter_[j]",
                                      "inlined_[i]", "waker_[w]"},
                                     {9}}}));
}

TEST(FoldedReader, CommentAndBlankLinesAreSkippedAndCommentsKept) {
  const core::Profile p = read_ok("# made by hand\n\nmain;a 1\n   \n#second\n");
  EXPECT_EQ(samples_of(p), (Samples{{{"main", "a"}, {1}}}));
  ASSERT_EQ(p.comments.size(), 2u);
  EXPECT_EQ(p.str(p.comments[0]), "made by hand");
  EXPECT_EQ(p.str(p.comments[1]), "second");
}

TEST(FoldedReader, CrlfLineEndings) {
  const core::Profile p = read_ok("main;a 1\r\nmain;b 2\r\n");
  EXPECT_EQ(samples_of(p), (Samples{{{"main", "a"}, {1}}, {{"main", "b"}, {2}}}));
}

TEST(FoldedReader, LastLineWithoutNewline) {
  EXPECT_EQ(samples_of(read_ok("main;a 1\nmain;b 2")),
            (Samples{{{"main", "a"}, {1}}, {{"main", "b"}, {2}}}));
}

TEST(FoldedReader, EmptyInputIsAnEmptyProfileWithAWarning) {
  for (std::string_view text : {"", "\n\n", "# only a comment\n"}) {
    core::Diagnostics diagnostics;
    const core::Profile p = read_ok(text, diagnostics);
    EXPECT_EQ(p.sample_count(), 0u) << text;
    ASSERT_EQ(p.sample_types.size(), 1u);
    ASSERT_EQ(diagnostics.warnings().size(), 1u);
    EXPECT_EQ(diagnostics.warnings()[0], "test.folded: the file holds no stacks");
  }
}

TEST(FoldedReader, PlainFileGivesNoWarnings) {
  core::Diagnostics diagnostics;
  (void)read_ok("main;a 1\nmain;b 2\n", diagnostics);
  EXPECT_TRUE(diagnostics.empty());
}

TEST(FoldedReader, TwoCountsOnEveryLineMakeADifferentialFile) {
  core::Diagnostics diagnostics;
  const core::Profile p = read_ok("main;a 3 5\nmain;b 0 2\nmain;a 1 1\n", diagnostics);
  ASSERT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[0].type), "samples");
  EXPECT_EQ(p.str(p.sample_types[1].type), "samples_after");
  EXPECT_EQ(p.str(p.sample_types[1].unit), "count");
  EXPECT_EQ(samples_of(p), (Samples{{{"main", "a"}, {4, 6}}, {{"main", "b"}, {0, 2}}}));
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  EXPECT_NE(diagnostics.warnings()[0].find("differential"), std::string::npos);
}

TEST(FoldedReader, DifferentialLineWithSpacesInFrames) {
  const core::Profile p = read_ok("a;b c 3 4\n");
  EXPECT_EQ(samples_of(p), (Samples{{{"a", "b c"}, {3, 4}}}));
}

TEST(FoldedReader, MixedOneAndTwoCountLinesKeepTheNumberInTheLeafName) {
  core::Diagnostics diagnostics;
  const core::Profile p = read_ok("main;b 2\nmain;GC Thread 12 5\n", diagnostics);
  ASSERT_EQ(p.sample_types.size(), 1u);
  EXPECT_EQ(samples_of(p), (Samples{{{"main", "GC Thread 12"}, {5}}, {{"main", "b"}, {2}}}));
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  EXPECT_NE(diagnostics.warnings()[0].find("1 lines (the first: line 2)"), std::string::npos)
      << diagnostics.warnings()[0];
}

TEST(FoldedReader, ANumberTooLargeForACountIsNotASecondCountColumn) {
  const core::Profile p = read_ok("a;b 99999999999999999999 3\n");
  ASSERT_EQ(p.sample_types.size(), 1u);
  EXPECT_EQ(samples_of(p), (Samples{{{"a", "b 99999999999999999999"}, {3}}}));
}

// --- Malformed lines: the message names the file and the line.

TEST(FoldedReaderErrors, MissingCount) {
  EXPECT_EQ(read_error("main;a 1\nmain;b\n"),
            "test.folded: line 2: expected 'frames COUNT', found no count");
}

TEST(FoldedReaderErrors, CountWithoutFrames) {
  EXPECT_EQ(read_error("42\n"), "test.folded: line 1: expected 'frames COUNT', found a count "
                                "without frames");
}

TEST(FoldedReaderErrors, NonNumericCount) {
  EXPECT_EQ(read_error("main;a x\n"), "test.folded: line 1: expected 'frames COUNT': 'x' is not "
                                      "a count (a non-negative integer)");
  EXPECT_EQ(read_error("main;a 5x\n"), "test.folded: line 1: expected 'frames COUNT': '5x' is "
                                       "not a count (a non-negative integer)");
  EXPECT_EQ(read_error("main;a 0x10\n"), "test.folded: line 1: expected 'frames COUNT': '0x10' "
                                         "is not a count (a non-negative integer)");
}

TEST(FoldedReaderErrors, NegativeCount) {
  EXPECT_EQ(read_error("main;a 1\nmain;b -5\n"),
            "test.folded: line 2: expected 'frames COUNT': '-5' is negative");
}

TEST(FoldedReaderErrors, FractionalCount) {
  const std::string e = read_error("main;a 1\n\n# c\nmain;b 1.5\n");
  EXPECT_EQ(e, "test.folded: line 4: expected 'frames COUNT': '1.5' is fractional; tally keeps "
               "integer counts only (scale the counts to integers)");
  EXPECT_NE(read_error("main;a 2.\n").find("'2.' is fractional"), std::string::npos);
  EXPECT_NE(read_error("main;a .5\n").find("'.5' is fractional"), std::string::npos);
}

TEST(FoldedReaderErrors, TrailingGarbageAfterTheCount) {
  EXPECT_EQ(read_error("main;a 1\nmain;b 5 extra\n"),
            "test.folded: line 2: expected 'frames COUNT': 'extra' is not a count (a "
            "non-negative integer)");
}

TEST(FoldedReaderErrors, CountTooLarge) {
  EXPECT_EQ(read_error("a 9223372036854775808\n"),
            "test.folded: line 1: expected 'frames COUNT': '9223372036854775808' is too large "
            "for a 64-bit count");
}

TEST(FoldedReaderErrors, LineNumbersCountCrlfLines) {
  EXPECT_EQ(read_error("a 1\r\n\r\nb\r\n"),
            "test.folded: line 3: expected 'frames COUNT', found no count");
}

}  // namespace
}  // namespace tally::folded::test
