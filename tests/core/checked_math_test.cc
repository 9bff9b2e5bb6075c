// core/checked_math.h: sums and products clamp at the int64 limits instead of wrapping.
#include "core/checked_math.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tally::core
