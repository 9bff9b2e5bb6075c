// core::find_sample_counts: which value of a profile holds the number of samples, and
// SampleCountColumn::count turning a value into a count.
#include "core/sample_counts.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "core/profile.h"

namespace tally::core {
namespace {

void add(Profile& p, std::vector<int64_t> values) {
  p.add_sample(std::vector<LocationId>{1}, values);
}

TEST(FindSampleCounts, UsesTheSamplesTypeWhereverItIs) {
  Profile p;
  p.sample_types = {p.value_type("cpu", "nanoseconds"), p.value_type("samples", "count")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 10;
  add(p, {120, 12});
  SampleCountColumn c = find_sample_counts(p);
  EXPECT_EQ(c.index, 1u);
  EXPECT_EQ(c.divide_by, 1);
  EXPECT_TRUE(c.note.empty());
  EXPECT_EQ(c.count(p, 0), 12);
}

TEST(FindSampleCounts, DividesThePeriodTypeByThePeriod) {
  Profile p;
  p.sample_types = {p.value_type("alloc_space", "bytes"), p.value_type("cpu", "nanoseconds")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 10;
  add(p, {7, 30});
  add(p, {7, 24});  // 2.4 -> 2
  add(p, {7, 25});  // 2.5 -> 3
  add(p, {7, 4});   // 0.4 -> 0
  SampleCountColumn c = find_sample_counts(p);
  EXPECT_EQ(c.index, 1u);
  EXPECT_EQ(c.divide_by, 10);
  EXPECT_NE(c.note.find("cpu"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("10"), std::string::npos) << c.note;
  EXPECT_EQ(c.count(p, 0), 3);
  EXPECT_EQ(c.count(p, 1), 2);
  EXPECT_EQ(c.count(p, 2), 3);
  EXPECT_EQ(c.count(p, 3), 0);
}

TEST(FindSampleCounts, PeriodTypeMustMatchInUnitToo) {
  Profile p;
  p.sample_types = {p.value_type("alloc", "bytes"), p.value_type("cpu", "microseconds")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 10;
  add(p, {5, 50});
  SampleCountColumn c = find_sample_counts(p);
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.divide_by, 1);
  EXPECT_NE(c.note.find("alloc"), std::string::npos) << c.note;
}

TEST(FindSampleCounts, ZeroPeriodFallsBackToTheFirstTypeWithANote) {
  Profile p;
  p.sample_types = {p.value_type("alloc", "bytes"), p.value_type("cpu", "nanoseconds")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 0;
  add(p, {5, 50});
  SampleCountColumn c = find_sample_counts(p);
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.divide_by, 1);
  EXPECT_FALSE(c.note.empty());
  EXPECT_EQ(c.count(p, 0), 5);
}

TEST(FindSampleCounts, NoSampleTypesGivesNoNote) {
  Profile p;
  SampleCountColumn c = find_sample_counts(p);
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.divide_by, 1);
  EXPECT_TRUE(c.note.empty());
}

TEST(FindSampleCounts, DividingTheLargestValueDoesNotOverflow) {
  Profile p;
  p.sample_types = {p.value_type("cpu", "nanoseconds")};
  p.period_type = p.sample_types[0];
  p.period = 1000;
  add(p, {std::numeric_limits<int64_t>::max()});
  SampleCountColumn c = find_sample_counts(p);
  ASSERT_EQ(c.divide_by, 1000);
  EXPECT_EQ(c.count(p, 0), std::numeric_limits<int64_t>::max() / 1000);
}

}  // namespace
}  // namespace tally::core
