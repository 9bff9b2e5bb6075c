// core::LineList: a location's lines, one held in place and more on the heap. Each test
// checks the lines it reads back against what went in, across the switch between the two.
#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "core/line_list.h"

namespace tally::core {
namespace {

std::vector<Line> numbered(size_t n) {
  std::vector<Line> lines;
  for (size_t i = 0; i < n; ++i)
    lines.push_back({static_cast<FunctionId>(i + 1), static_cast<int64_t>(100 + i), static_cast<int64_t>(i)});
  return lines;
}

std::vector<Line> as_vector(const LineList& list) { return {list.begin(), list.end()}; }

TEST(LineList, StartsEmpty) {
  LineList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.begin(), list.end());
}

TEST(LineList, PushBackKeepsEveryLineInOrderAcrossGrowth) {
  const std::vector<Line> want = numbered(37);
  LineList list;
  for (size_t i = 0; i < want.size(); ++i) {
    list.push_back(want[i]);
    ASSERT_EQ(list.size(), i + 1);
    ASSERT_EQ(list.back(), want[i]);
    ASSERT_EQ(list.front(), want[0]);
  }
  EXPECT_EQ(as_vector(list), want);
}

// GCC 12 cannot tell that two lines live on the heap and warns that list[1] would read past
// the line held in place (-Warray-bounds): a false positive, silenced for this test only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
TEST(LineList, PushingItsOwnLineWhileGrowingCopiesTheValue) {
  LineList list{{1, 10, 0}, {2, 20, 0}};
  list.push_back(list.front());  // capacity 2: grows while reading its own element
  list.push_back(list[1]);
  EXPECT_EQ(as_vector(list), (std::vector<Line>{{1, 10, 0}, {2, 20, 0}, {1, 10, 0}, {2, 20, 0}}));
}
#pragma GCC diagnostic pop

TEST(LineList, CopiesAreIndependent) {
  for (size_t n : {1u, 2u, 5u}) {
    const std::vector<Line> lines = numbered(n);
    LineList a(lines.begin(), lines.end());
    LineList b = a;
    b.front().line = -1;
    EXPECT_EQ(as_vector(a), numbered(n)) << n;
    EXPECT_NE(a, b) << n;
    LineList c;
    c = a;
    EXPECT_EQ(c, a) << n;
  }
}

TEST(LineList, MoveTakesTheLinesAndEmptiesTheSource) {
  for (size_t n : {0u, 1u, 3u}) {
    const std::vector<Line> lines = numbered(n);
    LineList a(lines.begin(), lines.end());
    LineList b = std::move(a);
    EXPECT_EQ(as_vector(b), numbered(n)) << n;
    EXPECT_TRUE(a.empty()) << n;  // NOLINT(bugprone-use-after-move): moved-from is empty
    LineList c{{9, 9, 9}, {8, 8, 8}};
    c = std::move(b);
    EXPECT_EQ(as_vector(c), numbered(n)) << n;
    a.push_back({5, 5, 5});  // a moved-from list is usable
    EXPECT_EQ(as_vector(a), (std::vector<Line>{{5, 5, 5}})) << n;
  }
}

TEST(LineList, SelfAssignmentKeepsTheLines) {
  const std::vector<Line> lines = numbered(4);
  LineList list(lines.begin(), lines.end());
  const LineList& same = list;
  list = same;
  EXPECT_EQ(as_vector(list), numbered(4));
  list.assign(list.begin() + 1, list.end());  // from its own lines, shrinking
  EXPECT_EQ(as_vector(list), (std::vector<Line>(lines.begin() + 1, lines.end())));
}

TEST(LineList, AssignFromOwnLinesWhileGrowingReadsThemBeforeFreeing) {
  LineList list{{1, 1, 0}};
  std::vector<Line> twice(list.begin(), list.end());
  twice.insert(twice.end(), list.begin(), list.end());
  list.assign(twice.begin(), twice.end());
  EXPECT_EQ(as_vector(list), twice);
}

TEST(LineList, ClearResizeAndReserve) {
  const std::vector<Line> lines = numbered(3);
  LineList list(lines.begin(), lines.end());
  list.reserve(10);
  EXPECT_GE(list.capacity(), 10u);
  EXPECT_EQ(as_vector(list), numbered(3));
  list.resize(5);
  ASSERT_EQ(list.size(), 5u);
  EXPECT_EQ(list[4], Line{});
  list.resize(1);
  EXPECT_EQ(as_vector(list), numbered(1));
  list.clear();
  EXPECT_TRUE(list.empty());
}

TEST(LineList, AtChecksTheIndex) {
  LineList list{{7, 70, 0}};
  EXPECT_EQ(list.at(0).function, 7u);
  EXPECT_THROW((void)list.at(1), std::out_of_range);
}

TEST(LineList, ReverseIterationIsOutermostFirst) {
  const std::vector<Line> lines = numbered(3);
  LineList list(lines.begin(), lines.end());
  std::vector<FunctionId> order;
  for (auto it = list.rbegin(); it != list.rend(); ++it) order.push_back(it->function);
  EXPECT_EQ(order, (std::vector<FunctionId>{3, 2, 1}));
}

TEST(LineList, EqualityComparesTheLines) {
  EXPECT_EQ(LineList({{1, 2, 3}}), LineList({{1, 2, 3}}));
  EXPECT_NE(LineList({{1, 2, 3}}), LineList({{1, 2, 4}}));
  EXPECT_NE(LineList({{1, 2, 3}}), LineList({{1, 2, 3}, {1, 2, 3}}));
  EXPECT_EQ(LineList(), LineList());
}

}  // namespace
}  // namespace tally::core
