// core::StringTable: one id per distinct string, id 0 is "", and the views it hands out
// stay valid however much the table grows.
#include "core/string_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tally::core {
namespace {

TEST(StringTable, FreshTableHoldsOnlyTheEmptyStringAsIdZero) {
  StringTable t;
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0], "");
  EXPECT_EQ(t.intern(""), 0u);
  EXPECT_EQ(t.size(), 1u);
}

TEST(StringTable, NewStringsGetConsecutiveIdsAndRepeatsGetTheSameId) {
  StringTable t;
  EXPECT_EQ(t.intern("main"), 1u);
  EXPECT_EQ(t.intern("foo"), 2u);
  EXPECT_EQ(t.intern("main"), 1u);
  EXPECT_EQ(t.intern("foo"), 2u);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1], "main");
  EXPECT_EQ(t[2], "foo");
}

TEST(StringTable, KeepsItsOwnCopyOfTheText) {
  StringTable t;
  std::string name = "libc.so.6";
  StringId id = t.intern(name);
  name[0] = 'X';  // changing the caller's buffer must not change the table
  EXPECT_EQ(t[id], "libc.so.6");
  EXPECT_EQ(t.intern("libc.so.6"), id);
  EXPECT_EQ(t.intern("Xibc.so.6"), id + 1);
}

TEST(StringTable, ComparesTheWholeViewIncludingEmbeddedNul) {
  StringTable t;
  StringId ab = t.intern(std::string_view("a\0b", 3));
  StringId ac = t.intern(std::string_view("a\0c", 3));
  StringId a = t.intern("a");
  EXPECT_NE(ab, ac);
  EXPECT_NE(ab, a);
  EXPECT_EQ(t[ab].size(), 3u);
  // A view into a longer buffer interns only its own characters.
  EXPECT_EQ(t.intern(std::string_view("abc", 1)), a);
}

TEST(StringTable, ViewsAndLookupsSurviveManyInserts) {
  StringTable t;
  // Short strings live inside std::string's inline buffer: a container that moved its
  // elements while growing would leave these views (and the table's own keys) dangling.
  std::vector<std::string_view> early;
  for (int i = 0; i < 100; ++i) early.push_back(t[t.intern("s" + std::to_string(i))]);
  for (int i = 0; i < 200000; ++i) t.intern("filler" + std::to_string(i));
  ASSERT_EQ(t.size(), 1u + 100u + 200000u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(early[static_cast<size_t>(i)], "s" + std::to_string(i));
    EXPECT_EQ(t.intern("s" + std::to_string(i)), static_cast<StringId>(i + 1));
  }
  EXPECT_EQ(t.intern("filler199999"), static_cast<StringId>(100 + 200000));
}

TEST(StringTable, CopyHasTheSameIdsAndOutlivesTheOriginal) {
  auto original = std::make_unique<StringTable>();
  original->intern("x");
  original->intern("y");
  StringTable copy = *original;
  original.reset();  // the copy must not refer to the original's storage
  ASSERT_EQ(copy.size(), 3u);
  EXPECT_EQ(copy[1], "x");
  EXPECT_EQ(copy[2], "y");
  EXPECT_EQ(copy.intern("x"), 1u);
  EXPECT_EQ(copy.intern("y"), 2u);
  EXPECT_EQ(copy.intern("z"), 3u);
}

TEST(StringTable, CopiesAreIndependent) {
  StringTable a;
  a.intern("x");
  StringTable b = a;
  b.intern("only-in-b");
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(a.intern("only-in-a"), 2u);
  EXPECT_EQ(b[2], "only-in-b");
}

TEST(StringTable, CopyAssignmentReplacesPreviousContent) {
  StringTable source;
  source.intern("x");
  StringTable target;
  target.intern("old");
  target.intern("older");
  target = source;
  ASSERT_EQ(target.size(), 2u);
  EXPECT_EQ(target[1], "x");
  EXPECT_EQ(target.intern("x"), 1u);
  EXPECT_EQ(target.intern("old"), 2u);  // forgotten, so it is new again
  source.intern("later");
  EXPECT_EQ(target.size(), 3u);
}

TEST(StringTable, SelfAssignmentKeepsContent) {
  StringTable t;
  t.intern("x");
  const StringTable& same = t;
  t = same;
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1], "x");
  EXPECT_EQ(t.intern("x"), 1u);
}

TEST(StringTable, MoveKeepsIdsAndPreviouslyTakenViews) {
  StringTable a;
  std::string_view x = a[a.intern("x")];
  StringTable b = std::move(a);
  EXPECT_EQ(x, "x");
  EXPECT_EQ(b.intern("x"), 1u);
  StringTable c;
  c = std::move(b);
  EXPECT_EQ(x, "x");
  EXPECT_EQ(c.intern("x"), 1u);
  EXPECT_EQ(c.intern("y"), 2u);
}

}  // namespace
}  // namespace tally::core
