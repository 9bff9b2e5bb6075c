// io::LineReader: lines split at \n or \r\n, terminators removed, numbered from 1 (or a
// given first number), a last line without newline still returned.
#include "io/line_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tally::io {
namespace {

std::vector<std::string> all_lines(std::string_view text) {
  LineReader r(text);
  std::vector<std::string> out;
  std::string_view line;
  while (r.next(line)) out.emplace_back(line);
  return out;
}

using Lines = std::vector<std::string>;

TEST(LineReader, SplitsAtNewlines) {
  EXPECT_EQ(all_lines("a\nbb\nccc\n"), (Lines{"a", "bb", "ccc"}));
}

TEST(LineReader, StripsCarriageReturnBeforeNewline) {
  EXPECT_EQ(all_lines("a\r\nbb\r\n"), (Lines{"a", "bb"}));
  EXPECT_EQ(all_lines("a\r\nbb\nc\r\n"), (Lines{"a", "bb", "c"}));
}

TEST(LineReader, ReturnsALastLineWithoutNewline) {
  EXPECT_EQ(all_lines("a\nlast"), (Lines{"a", "last"}));
  EXPECT_EQ(all_lines("a\r\nlast\r"), (Lines{"a", "last"}));
  EXPECT_EQ(all_lines("only"), (Lines{"only"}));
}

TEST(LineReader, EmptyLinesAreLines) {
  EXPECT_EQ(all_lines("\n"), (Lines{""}));
  EXPECT_EQ(all_lines("a\n\n\nb\n"), (Lines{"a", "", "", "b"}));
  EXPECT_EQ(all_lines("\r\n\r\n"), (Lines{"", ""}));
}

TEST(LineReader, EmptyTextHasNoLines) {
  EXPECT_EQ(all_lines(""), Lines{});
}

TEST(LineReader, CarriageReturnInsideALineIsKept) {
  EXPECT_EQ(all_lines("a\rb\nc\r\rd\n"), (Lines{"a\rb", "c\r\rd"}));
}

TEST(LineReader, NumbersLinesFromOne) {
  LineReader r("first\r\n\nthird");
  std::string_view line;
  EXPECT_EQ(r.line_number(), 0u);  // nothing returned yet
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(line, "first");
  EXPECT_EQ(r.line_number(), 1u);
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(line, "");
  EXPECT_EQ(r.line_number(), 2u);
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(line, "third");
  EXPECT_EQ(r.line_number(), 3u);
  EXPECT_FALSE(r.next(line));
  EXPECT_EQ(r.line_number(), 3u);  // still the last line returned
}

TEST(LineReader, NumbersFromAGivenFirstLine) {
  LineReader r("x\ny\n", 41);
  std::string_view line;
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(r.line_number(), 41u);
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(r.line_number(), 42u);
}

TEST(LineReader, PositionIsTheByteAfterEachLinesTerminator) {
  LineReader r("ab\r\ncd\nef");
  std::string_view line;
  EXPECT_EQ(r.position(), 0u);
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(r.position(), 4u);
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(r.position(), 7u);
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(r.position(), 9u);
}

TEST(LineReader, LinesAreViewsIntoTheText) {
  std::string text = "abc\ndef\n";
  LineReader r(text);
  std::string_view line;
  ASSERT_TRUE(r.next(line));
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(line.data(), text.data() + 4);
}

}  // namespace
}  // namespace tally::io
