// folded -> profile -> folded. A canonical file (sorted as `LC_ALL=C sort` sorts, each
// stack once, counts > 0) comes back byte for byte; other files come back in the
// canonical form written out here by hand.
#include <gtest/gtest.h>

#include "folded_test_helpers.h"

namespace tally::folded::test {
namespace {

std::string round_trip(std::string_view text, size_t value_index = 0) {
  return write_ok(read_ok(text), value_index);
}

TEST(FoldedRoundTrip, CanonicalFileIsByteIdentical) {
  // Checked sorted with `LC_ALL=C sort`. Covers address-named frames, spaces in frames,
  // ';' inside brackets, operator names, FlameGraph annotations and an unbalanced line.
  const std::string canonical =
      "[unknown];[libfoo.so+0x1234] 2\n"
      "java;Thread.run;Foo bar (Baz.java:12) 42\n"
      "main;Foo::operator()(int; long);bar 1\n"
      "main;a::operator<;b 2\n"
      "main;std::map<int, std::vector<a;b>>::find;foo(int; char) 3\n"
      "main;std::operator<<(std::ostream&, int) 8\n"
      "main;std::operator<<(std::ostream&, int);write 9\n"
      "perf;do_syscall_64_[k];Interpreter_[j] 10\n"
      "perf;x<y;z 4\n";
  EXPECT_EQ(round_trip(canonical), canonical);
}

TEST(FoldedRoundTrip, OtherFilesComeBackCanonical) {
  const std::string input =
      "# recorded by hand\r\n"
      "main;b 1\r\n"
      "\r\n"
      "main;a 2\r\n"
      "main;b   4\r\n"
      "  main;c 0\r\n"
      "main;a\t3\r\n";
  // Comments and blank lines gone, duplicates summed, the zero line dropped, LF endings.
  EXPECT_EQ(round_trip(input), "main;a 5\nmain;b 5\n");
}

TEST(FoldedRoundTrip, DifferentialFileWritesEitherColumn) {
  const std::string input = "main;b 0 2\nmain;a 3 5\nmain;a 1 0\n";
  EXPECT_EQ(round_trip(input, 0), "main;a 4\n");
  EXPECT_EQ(round_trip(input, 1), "main;a 5\nmain;b 2\n");
}

TEST(FoldedRoundTrip, ReadingTheWrittenFileGivesTheSameSamples) {
  const std::string input = "x;y 1\na;b;c 7\na;b 2\nq<r;s>;t 3\n";
  const core::Profile first = read_ok(input);
  const core::Profile second = read_ok(write_ok(first));
  EXPECT_EQ(samples_of(second), samples_of(first));
}

}  // namespace
}  // namespace tally::folded::test
