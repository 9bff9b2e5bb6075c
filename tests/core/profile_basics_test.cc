// core::Profile building blocks: 1-based ids, the flat sample pools and their accessors,
// totals, sample type lookup and attributes.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/profile.h"

namespace tally::core {
namespace {

using Stack = std::vector<LocationId>;
using Values = std::vector<int64_t>;

TEST(ProfileIds, MappingsLocationsAndFunctionsAreNumberedFromOne) {
  Profile p;
  EXPECT_EQ(p.add_mapping({.start = 0x1000, .limit = 0x2000}), 1u);
  EXPECT_EQ(p.add_mapping({.start = 0x5000, .limit = 0x6000}), 2u);
  EXPECT_EQ(p.add_function({.name = p.intern("main")}), 1u);
  EXPECT_EQ(p.add_function({.name = p.intern("foo")}), 2u);
  EXPECT_EQ(p.add_function({.name = p.intern("bar")}), 3u);
  EXPECT_EQ(p.add_location({.mapping = 2, .address = 0x5010, .lines = {}}), 1u);

  EXPECT_EQ(p.mapping(1).start, 0x1000u);
  EXPECT_EQ(p.mapping(2).start, 0x5000u);
  EXPECT_EQ(p.str(p.function(1).name), "main");
  EXPECT_EQ(p.str(p.function(3).name), "bar");
  EXPECT_EQ(p.location(1).address, 0x5010u);
  EXPECT_EQ(p.location(1).mapping, 2u);
}

TEST(ProfileIds, AccessorsByIdAreWritable) {
  Profile p;
  MappingId m = p.add_mapping({});
  FunctionId f = p.add_function({});
  LocationId l = p.add_location({});
  p.mapping(m).file = p.intern("a.out");
  p.function(f).start_line = 42;
  p.location(l).lines.push_back({.function = f, .line = 7});
  EXPECT_EQ(p.str(p.mappings[0].file), "a.out");
  EXPECT_EQ(p.functions[0].start_line, 42);
  ASSERT_EQ(p.locations[0].lines.size(), 1u);
  EXPECT_EQ(p.locations[0].lines[0].line, 7);
}

class ProfileSamples : public ::testing::Test {
 protected:
  void SetUp() override {
    p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  }
  Profile p;
};

TEST_F(ProfileSamples, AddSampleWithTooFewOrTooManyValuesThrows) {
  Stack stack{1, 2};
  EXPECT_THROW(p.add_sample(stack, Values{1}), std::logic_error);
  EXPECT_THROW(p.add_sample(stack, Values{1, 2, 3}), std::logic_error);
  EXPECT_THROW(p.add_sample(stack, Values{}), std::logic_error);
  EXPECT_EQ(p.sample_count(), 0u);  // a refused sample leaves nothing behind
  p.add_sample(stack, Values{1, 2});
  EXPECT_EQ(p.sample_count(), 1u);
}

TEST_F(ProfileSamples, AccessorsReturnEachSampleAsAdded) {
  Label thread{.key = p.intern("thread"), .str = p.intern("worker")};
  Label bytes{.key = p.intern("bytes"), .num = 4096, .num_unit = p.intern("bytes")};
  p.add_sample(Stack{3, 2, 1}, Values{1, 10});
  p.add_sample(Stack{}, Values{2, 20}, std::vector<Label>{thread, bytes});
  p.add_sample(Stack{7}, Values{-3, 30}, std::vector<Label>{bytes});

  ASSERT_EQ(p.sample_count(), 3u);
  EXPECT_EQ(Stack(p.stack(0).begin(), p.stack(0).end()), (Stack{3, 2, 1}));
  EXPECT_TRUE(p.stack(1).empty());
  EXPECT_EQ(Stack(p.stack(2).begin(), p.stack(2).end()), (Stack{7}));
  EXPECT_EQ(Values(p.values(0).begin(), p.values(0).end()), (Values{1, 10}));
  EXPECT_EQ(Values(p.values(1).begin(), p.values(1).end()), (Values{2, 20}));
  EXPECT_EQ(Values(p.values(2).begin(), p.values(2).end()), (Values{-3, 30}));
  EXPECT_TRUE(p.labels(0).empty());
  ASSERT_EQ(p.labels(1).size(), 2u);
  EXPECT_EQ(p.labels(1)[0], thread);
  EXPECT_EQ(p.labels(1)[1], bytes);
  ASSERT_EQ(p.labels(2).size(), 1u);
  EXPECT_EQ(p.labels(2)[0], bytes);
}

TEST_F(ProfileSamples, ValuesCanBeChangedInPlace) {
  p.add_sample(Stack{1}, Values{1, 10});
  p.add_sample(Stack{2}, Values{2, 20});
  p.values(1)[0] = 99;
  EXPECT_EQ(p.values(0)[0], 1);
  EXPECT_EQ(p.values(0)[1], 10);
  EXPECT_EQ(p.values(1)[0], 99);
  EXPECT_EQ(p.values(1)[1], 20);
}

TEST_F(ProfileSamples, TotalSumsOneColumn) {
  EXPECT_EQ(p.total(0), 0);
  p.add_sample(Stack{1}, Values{1, 10});
  p.add_sample(Stack{2}, Values{2, 20});
  p.add_sample(Stack{1, 2}, Values{-4, 300});
  EXPECT_EQ(p.total(0), -1);
  EXPECT_EQ(p.total(1), 330);
}

TEST_F(ProfileSamples, TotalSaturatesInsteadOfOverflowing) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  p.add_sample(Stack{1}, Values{kMax, kMin});
  p.add_sample(Stack{2}, Values{kMax, kMin});
  EXPECT_EQ(p.total(0), kMax);
  EXPECT_EQ(p.total(1), kMin);
}

TEST_F(ProfileSamples, ClearSamplesEmptiesAllPools) {
  p.add_sample(Stack{1, 2}, Values{1, 10}, std::vector<Label>{{.key = p.intern("k")}});
  p.clear_samples();
  EXPECT_EQ(p.sample_count(), 0u);
  EXPECT_EQ(p.total(0), 0);
  p.add_sample(Stack{5}, Values{3, 30});
  ASSERT_EQ(p.sample_count(), 1u);
  EXPECT_EQ(p.stack(0)[0], 5u);
  EXPECT_EQ(p.values(0)[1], 30);
  EXPECT_TRUE(p.labels(0).empty());
}

TEST_F(ProfileSamples, ReserveDoesNotAddSamples) {
  p.reserve_samples(1000, 10000);
  EXPECT_EQ(p.sample_count(), 0u);
  p.add_sample(Stack{1}, Values{1, 2});
  EXPECT_EQ(p.sample_count(), 1u);
}

TEST(ProfileSampleTypes, IndexIsFoundByTypeNameNotUnit) {
  Profile p;
  EXPECT_EQ(p.sample_type_index("samples"), -1);
  p.sample_types = {p.value_type("alloc_objects", "count"), p.value_type("samples", "count"),
                    p.value_type("cpu", "nanoseconds")};
  EXPECT_EQ(p.sample_type_index("alloc_objects"), 0);
  EXPECT_EQ(p.sample_type_index("samples"), 1);
  EXPECT_EQ(p.sample_type_index("cpu"), 2);
  EXPECT_EQ(p.sample_type_index("count"), -1);
  EXPECT_EQ(p.sample_type_index("nanoseconds"), -1);
  EXPECT_EQ(p.sample_type_index("sample"), -1);
  EXPECT_EQ(p.sample_type_index(""), -1);
}

TEST(ProfileAttributes, AbsentKeyGivesEmptyValue) {
  Profile p;
  EXPECT_EQ(p.attribute("dcpi.platform"), "");
}

TEST(ProfileAttributes, SetAddsInOrderAndReplacesInPlace) {
  Profile p;
  p.set_attribute("dcpi.platform", "alpha");
  p.set_attribute("dcpi.epoch", "7");
  p.set_attribute("dcpi.platform", "x86_64");
  EXPECT_EQ(p.attribute("dcpi.platform"), "x86_64");
  EXPECT_EQ(p.attribute("dcpi.epoch"), "7");
  ASSERT_EQ(p.attributes.size(), 2u);
  EXPECT_EQ(p.attributes[0].first, "dcpi.platform");  // replacing keeps the first position
  EXPECT_EQ(p.attributes[1].first, "dcpi.epoch");
}

TEST(ProfileAttributes, FirstValueWinsWhenAKeyWasAppendedTwice) {
  Profile p;
  p.attributes.emplace_back("k", "first");
  p.attributes.emplace_back("k", "second");
  EXPECT_EQ(p.attribute("k"), "first");
}

}  // namespace
}  // namespace tally::core
