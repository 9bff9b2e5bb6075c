// core/checked_math.h: sums, differences, products and negations clamp at the int64 limits instead of wrapping.
#include "core/checked_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace tally::core {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(AddSaturating, OrdinarySumsAreExact) {
  EXPECT_EQ(add_saturating(2, 3), 5);
  EXPECT_EQ(add_saturating(-2, 3), 1);
  EXPECT_EQ(add_saturating(kMax, kMin), -1);
  EXPECT_EQ(add_saturating(kMax - 1, 1), kMax);
  EXPECT_EQ(add_saturating(kMin + 1, -1), kMin);
}

TEST(AddSaturating, ClampsAtBothEnds) {
  EXPECT_EQ(add_saturating(kMax, 1), kMax);
  EXPECT_EQ(add_saturating(kMax, kMax), kMax);
  EXPECT_EQ(add_saturating(1, kMax), kMax);
  EXPECT_EQ(add_saturating(kMin, -1), kMin);
  EXPECT_EQ(add_saturating(kMin, kMin), kMin);
  EXPECT_EQ(add_saturating(-1, kMin), kMin);
}

TEST(MulSaturating, OrdinaryProductsAreExact) {
  EXPECT_EQ(mul_saturating(6, 7), 42);
  EXPECT_EQ(mul_saturating(-6, 7), -42);
  EXPECT_EQ(mul_saturating(-6, -7), 42);
  EXPECT_EQ(mul_saturating(0, kMin), 0);
  EXPECT_EQ(mul_saturating(kMin, 1), kMin);
  EXPECT_EQ(mul_saturating(kMax, -1), kMin + 1);
  EXPECT_EQ(mul_saturating(int64_t(1) << 31, int64_t(1) << 31), int64_t(1) << 62);
}

TEST(MulSaturating, ClampsTowardsTheSignOfTheTrueProduct) {
  EXPECT_EQ(mul_saturating(kMax, 2), kMax);
  EXPECT_EQ(mul_saturating(kMax, -2), kMin);
  EXPECT_EQ(mul_saturating(-2, kMax), kMin);
  EXPECT_EQ(mul_saturating(kMin, 2), kMin);
  EXPECT_EQ(mul_saturating(kMin, -1), kMax);  // -kMin does not fit
  EXPECT_EQ(mul_saturating(kMin, kMin), kMax);
  EXPECT_EQ(mul_saturating(int64_t(1) << 32, int64_t(1) << 31), kMax);
  EXPECT_EQ(mul_saturating(-(int64_t(1) << 32), int64_t(1) << 31), kMin);
}

TEST(SubSaturating, ExactInsideAndClampedOutside) {
  EXPECT_EQ(sub_saturating(5, 7), -2);
  EXPECT_EQ(sub_saturating(kMin, kMin), 0);
  EXPECT_EQ(sub_saturating(-1, kMax), kMin);
  EXPECT_EQ(sub_saturating(kMax, -1), kMax);
  EXPECT_EQ(sub_saturating(0, kMin), kMax);
  EXPECT_EQ(sub_saturating(kMin, 1), kMin);
  EXPECT_EQ(sub_saturating(kMin, kMax), kMin);
  EXPECT_EQ(sub_saturating(kMax, kMin), kMax);
}

TEST(NegateAndAbsSaturating, TheMinimumMapsToTheMaximum) {
  EXPECT_EQ(negate_saturating(5), -5);
  EXPECT_EQ(negate_saturating(-5), 5);
  EXPECT_EQ(negate_saturating(kMax), kMin + 1);
  EXPECT_EQ(negate_saturating(kMin), kMax);
  EXPECT_EQ(abs_saturating(-5), 5);
  EXPECT_EQ(abs_saturating(0), 0);
  EXPECT_EQ(abs_saturating(kMin + 1), kMax);
  EXPECT_EQ(abs_saturating(kMin), kMax);
  EXPECT_EQ(abs_saturating(kMax), kMax);
}

TEST(AccumulateSaturating, SumsInPlaceAndStaysAtTheLimit) {
  int64_t sum = 0;
  for (int64_t v : {kMax, kMax, int64_t{5}}) accumulate_saturating(sum, v);
  EXPECT_EQ(sum, kMax);
  accumulate_saturating(sum, -10);
  EXPECT_EQ(sum, kMax - 10);
}

TEST(ToInt64Saturating, ClampsWhatACastCouldNotHold) {
  EXPECT_EQ(to_int64_saturating(12.9), 12);
  EXPECT_EQ(to_int64_saturating(-12.9), -12);
  EXPECT_EQ(to_int64_saturating(9223372036854775807.0), kMax);  // rounds to 2^63
  EXPECT_EQ(to_int64_saturating(1e300), kMax);
  EXPECT_EQ(to_int64_saturating(-9223372036854775808.0), kMin);
  EXPECT_EQ(to_int64_saturating(-1e300), kMin);
  EXPECT_EQ(to_int64_saturating(std::nan("")), 0);
  EXPECT_EQ(to_int64_saturating(9223372036854774784.0), 9223372036854774784);  // largest double below 2^63
}

}  // namespace
}  // namespace tally::core
