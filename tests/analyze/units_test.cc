// pprof's value formatting (internal/measurement) and the ± interval, against values
// worked out by hand from pprof's rules and the binomial formula.
#include <gtest/gtest.h>

#include "analyze/confidence.h"
#include "analyze/units.h"

namespace tally::analyze {
namespace {

TEST(Units, NanosecondsScaleToTheChosenUnit) {
  EXPECT_EQ(scaled_label(276'000'000, "nanoseconds", "ms"), "276ms");
  EXPECT_EQ(scaled_label(1'100'000'000, "nanoseconds", "s"), "1.10s");  // ".10" is kept
  EXPECT_EQ(scaled_label(2'000'000'000, "nanoseconds", "s"), "2s");     // ".00" is dropped
  EXPECT_EQ(scaled_label(0, "nanoseconds", "ms"), "0");
  EXPECT_EQ(scaled_label(1500, "nanoseconds", "auto"), "1.50us");
}

TEST(Units, BytesAndCounts) {
  EXPECT_EQ(scaled_label(1536, "bytes", "auto"), "1.50kB");            // 1536 / 1024
  EXPECT_EQ(scaled_label(13 * 1024 * 1024 + 512 * 1024, "bytes", "MB"), "13.50MB");
  EXPECT_EQ(scaled_label(1234, "count", "count"), "1234");
  EXPECT_EQ(scaled_label(-5, "count", "count"), "-5");
}

TEST(Units, OutputUnitFollowsTheSmallestValue) {
  // 29ms and 276ms are both in ms.
  EXPECT_EQ(select_output_unit(29'000'000, 276'000'000, "nanoseconds"), "ms");
  // 10ms is under 1% of 2s and in another unit: 100 x 10ms = 1s, so seconds.
  EXPECT_EQ(select_output_unit(10'000'000, 2'000'000'000, "nanoseconds"), "s");
  // 30ms of 2s is over 1%: the smallest value's unit stays.
  EXPECT_EQ(select_output_unit(30'000'000, 2'000'000'000, "nanoseconds"), "ms");
  EXPECT_EQ(select_output_unit(3, 100, "count"), "count");
}

TEST(Units, Percentages) {
  EXPECT_EQ(percentage(111, 276), "40.22%");  // 40.2174
  EXPECT_EQ(percentage(276, 276), "  100%");
  EXPECT_EQ(percentage(1, 276), " 0.36%");    // 0.3623, two significant digits
  EXPECT_EQ(percentage(0, 276), "    0%");
  EXPECT_EQ(percentage(1, 100000), "0.001%");
  EXPECT_EQ(percentage(5, 0), "    0%");
}

TEST(Confidence, BinomialNormalApproximation) {
  // 111 of 276: p = 0.40217, 1.96 * sqrt(p (1 - p) / 276) = 0.05785 -> 5.78 points.
  EXPECT_NEAR(share_interval_95(111, 276), 5.7848, 1e-3);
  EXPECT_EQ(format_interval(share_interval_95(111, 276)), "±5.8%");
  // 29 of 276: p = 0.10507, 1.96 * sqrt(0.10507 * 0.89493 / 276) = 0.03618.
  EXPECT_EQ(format_interval(share_interval_95(29, 276)), "±3.6%");
  // 1 of 10000: 1.96 * sqrt(1e-4 * 0.9999 / 1e4) = 1.96e-4 -> 0.0196 points.
  EXPECT_EQ(format_interval(share_interval_95(1, 10000)), "±0.02%");
  // No spread at p = 0 or 1, and nothing to say without samples.
  EXPECT_EQ(share_interval_95(0, 100), 0);
  EXPECT_EQ(share_interval_95(100, 100), 0);
  EXPECT_EQ(share_interval_95(3, 0), 0);
  EXPECT_EQ(format_interval(0), "±0%");
}

}  // namespace
}  // namespace tally::analyze
