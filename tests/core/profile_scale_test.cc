// Profile::scale: values of each sample type multiplied by that type's ratio, rounded to
// the nearest integer (halves away from zero, as pprof's math.Round), saturating at the
// int64 limits.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/profile.h"

namespace tally::core {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// A profile with one sample type and one single-frame sample per value.
Profile one_column(const std::vector<int64_t>& values) {
  Profile p;
  p.sample_types = {p.value_type("cpu", "nanoseconds")};
  for (int64_t v : values) p.add_sample(std::vector<LocationId>{1}, std::vector<int64_t>{v});
  return p;
}

std::vector<int64_t> column(const Profile& p, size_t type) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < p.sample_count(); ++i) out.push_back(p.values(i)[type]);
  return out;
}

TEST(ProfileScale, EachTypeUsesItsOwnRatio) {
  Profile p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  p.add_sample(std::vector<LocationId>{1}, std::vector<int64_t>{10, 10});
  p.add_sample(std::vector<LocationId>{2}, std::vector<int64_t>{3, 7});
  p.scale(std::vector<double>{2.0, 0.3});
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{20, 6}));
  EXPECT_EQ(column(p, 1), (std::vector<int64_t>{3, 2}));  // 3.0 and 2.1
}

TEST(ProfileScale, SingleRatioAppliesToEveryType) {
  Profile p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  p.add_sample(std::vector<LocationId>{1}, std::vector<int64_t>{4, 1000});
  p.scale(1.5);
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{6}));
  EXPECT_EQ(column(p, 1), (std::vector<int64_t>{1500}));
}

TEST(ProfileScale, RoundsToNearest) {
  Profile p = one_column({1, 2, 4, 5, -1, -2, -4, -5, 0});
  p.scale(1.0 / 3.0);
  // 0.33 0.67 1.33 1.67 and their negatives
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{0, 1, 1, 2, 0, -1, -1, -2, 0}));
}

TEST(ProfileScale, RoundsHalvesAwayFromZero) {
  Profile p = one_column({1, 3, 5, -1, -3, -5});
  p.scale(0.5);
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{1, 2, 3, -1, -2, -3}));
}

TEST(ProfileScale, SaturatesAtTheInt64Limits) {
  Profile p = one_column({kMax, kMin, kMax / 2 + 1, -(kMax / 2) - 1});
  p.scale(2.0);
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{kMax, kMin, kMax, kMin}));
}

TEST(ProfileScale, NegativeRatioSaturatesTheOtherWay) {
  Profile p = one_column({kMax, kMin});
  p.scale(-2.0);
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{kMin, kMax}));
}

TEST(ProfileScale, ExactResultsJustBelowTheLimitAreNotSaturated) {
  // 2^62 - 2^53 doubled is 2^63 - 2^54 = 9205357638345293824: representable in both
  // double and int64, so it must come out exactly rather than clamped to the limit.
  constexpr int64_t kHalf = (int64_t(1) << 62) - (int64_t(1) << 53);
  Profile p = one_column({kHalf, -kHalf});
  p.scale(2.0);
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{9205357638345293824, -9205357638345293824}));
}

TEST(ProfileScale, ShrinkingTheLargestValuesIsExact) {
  // double(kMax) is 2^63; halved it is 2^62, which is also kMax / 2 rounded to nearest.
  Profile p = one_column({kMax, kMin});
  p.scale(0.5);
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{int64_t(1) << 62, -(int64_t(1) << 62)}));
}

TEST(ProfileScale, RatioOfOneLeavesValuesUnchanged) {
  // Huge values do not survive a round trip through double; ratio 1 must not touch them.
  Profile p = one_column({kMax, kMax - 1, kMin + 1, 9007199254740993});
  p.scale(1.0);
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{kMax, kMax - 1, kMin + 1, 9007199254740993}));
}

TEST(ProfileScale, RatioOfZeroClearsValues) {
  Profile p = one_column({5, -5, kMax});
  p.scale(0.0);
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{0, 0, 0}));
}

TEST(ProfileScale, InfiniteRatioSaturatesNonZeroValues) {
  Profile p = one_column({5, -5});
  p.scale(std::numeric_limits<double>::infinity());
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{kMax, kMin}));
}

TEST(ProfileScale, ProductsThatAreNotANumberBecomeZero) {
  // 0 x inf and a NaN ratio have no meaningful count (and converting NaN to an integer
  // is undefined behaviour).
  Profile zero = one_column({0});
  zero.scale(std::numeric_limits<double>::infinity());
  EXPECT_EQ(column(zero, 0), (std::vector<int64_t>{0}));
  Profile p = one_column({7, -7});
  p.scale(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{0, 0}));
}

TEST(ProfileScale, WrongNumberOfRatiosThrows) {
  Profile p = one_column({5});
  EXPECT_THROW(p.scale(std::vector<double>{1.0, 2.0}), std::logic_error);
  EXPECT_THROW(p.scale(std::vector<double>{}), std::logic_error);
  EXPECT_EQ(column(p, 0), (std::vector<int64_t>{5}));
}

}  // namespace
}  // namespace tally::core
