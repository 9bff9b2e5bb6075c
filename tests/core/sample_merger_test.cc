// core::SampleMerger: adding a sample whose stack and labels match an earlier one sums
// into it; checked against a plain std::map tally on random input.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/profile.h"
#include "core/sample_merger.h"

namespace tally::core {
namespace {

using Stack = std::vector<LocationId>;
using Values = std::vector<int64_t>;

Profile two_types() {
  Profile p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  return p;
}

Values values_of(const Profile& p, size_t i) { return {p.values(i).begin(), p.values(i).end()}; }

TEST(SampleMerger, NewStacksAppendAndRepeatsSumIntoTheFirst) {
  Profile p = two_types();
  SampleMerger m(p);
  EXPECT_EQ(m.add(Stack{1, 2}, Values{1, 10}), 0u);
  EXPECT_EQ(m.add(Stack{2, 1}, Values{2, 20}), 1u);
  EXPECT_EQ(m.add(Stack{1, 2}, Values{3, 30}), 0u);
  EXPECT_EQ(m.add(Stack{}, Values{4, 40}), 2u);
  EXPECT_EQ(m.add(Stack{}, Values{5, 50}), 2u);
  ASSERT_EQ(p.sample_count(), 3u);
  EXPECT_EQ(values_of(p, 0), (Values{4, 40}));
  EXPECT_EQ(values_of(p, 1), (Values{2, 20}));
  EXPECT_EQ(values_of(p, 2), (Values{9, 90}));
}

TEST(SampleMerger, LabelsArePartOfTheIdentity) {
  Profile p = two_types();
  Label a{.key = p.intern("thread"), .str = p.intern("a")};
  Label b{.key = p.intern("thread"), .str = p.intern("b")};
  SampleMerger m(p);
  EXPECT_EQ(m.add(Stack{1}, Values{1, 1}, std::vector<Label>{a}), 0u);
  EXPECT_EQ(m.add(Stack{1}, Values{1, 1}, std::vector<Label>{b}), 1u);
  EXPECT_EQ(m.add(Stack{1}, Values{1, 1}), 2u);
  EXPECT_EQ(m.add(Stack{1}, Values{1, 1}, std::vector<Label>{a, b}), 3u);
  EXPECT_EQ(m.add(Stack{1}, Values{1, 1}, std::vector<Label>{b}), 1u);
  EXPECT_EQ(p.sample_count(), 4u);
  EXPECT_EQ(values_of(p, 1), (Values{2, 2}));
}

TEST(SampleMerger, MergesIntoSamplesThatWereThereBefore) {
  Profile p = two_types();
  p.add_sample(Stack{7, 8}, Values{1, 1});
  p.add_sample(Stack{9}, Values{2, 2});
  SampleMerger m(p);
  EXPECT_EQ(m.add(Stack{9}, Values{10, 10}), 1u);
  EXPECT_EQ(m.add(Stack{7, 8}, Values{10, 10}), 0u);
  EXPECT_EQ(m.add(Stack{7}, Values{10, 10}), 2u);
  EXPECT_EQ(values_of(p, 0), (Values{11, 11}));
  EXPECT_EQ(values_of(p, 1), (Values{12, 12}));
}

TEST(SampleMerger, IndexesManyExistingSamples) {
  // More existing samples than the merger's initial table holds.
  Profile p = two_types();
  for (LocationId i = 1; i <= 5000; ++i) p.add_sample(Stack{i}, Values{1, 0});
  SampleMerger m(p);
  for (LocationId i = 1; i <= 5000; ++i) EXPECT_EQ(m.add(Stack{i}, Values{1, 0}), i - 1);
  EXPECT_EQ(p.sample_count(), 5000u);
  EXPECT_EQ(p.total(0), 10000);
}

TEST(SampleMerger, SumsSaturate) {
  Profile p = two_types();
  SampleMerger m(p);
  m.add(Stack{1}, Values{INT64_MAX, INT64_MIN});
  m.add(Stack{1}, Values{1, -1});
  EXPECT_EQ(values_of(p, 0), (Values{INT64_MAX, INT64_MIN}));
}

TEST(SampleMerger, WrongValueCountThrowsForNewAndRepeatedStacks) {
  Profile p = two_types();
  SampleMerger m(p);
  EXPECT_THROW(m.add(Stack{1}, Values{1}), std::logic_error);
  m.add(Stack{1}, Values{1, 1});
  EXPECT_THROW(m.add(Stack{1}, Values{1, 2, 3}), std::logic_error);
  EXPECT_EQ(values_of(p, 0), (Values{1, 1}));
}

TEST(SampleMerger, AgreesWithAPlainMapOnRandomInput) {
  // Short stacks over few locations, so that repeats, shared prefixes and table growth
  // all happen; a std::map keyed by (stack, label) is the reference.
  std::mt19937_64 rng(20240611);
  Profile p = two_types();
  Label labels[2] = {{.key = p.intern("k"), .num = 1}, {.key = p.intern("k"), .num = 2}};
  using Key = std::pair<Stack, int>;  // label index, -1 for none
  std::map<Key, std::pair<size_t, Values>> expected;
  SampleMerger m(p);
  for (int i = 0; i < 60000; ++i) {
    Stack stack(rng() % 4);
    for (LocationId& l : stack) l = static_cast<LocationId>(1 + rng() % 12);
    int label = static_cast<int>(rng() % 3) - 1;
    Values v{1, static_cast<int64_t>(rng() % 1000)};
    std::vector<Label> with;
    if (label >= 0) with.push_back(labels[label]);
    size_t got = m.add(stack, v, with);
    auto [it, fresh] = expected.try_emplace(Key{stack, label}, expected.size(), Values{0, 0});
    EXPECT_EQ(got, it->second.first);
    it->second.second[0] += v[0];
    it->second.second[1] += v[1];
  }
  ASSERT_EQ(p.sample_count(), expected.size());
  ASSERT_GT(expected.size(), 2000u);  // enough distinct samples to make the table grow
  for (const auto& [key, entry] : expected) {
    const auto& [index, values] = entry;
    EXPECT_EQ(Stack(p.stack(index).begin(), p.stack(index).end()), key.first);
    EXPECT_EQ(p.labels(index).size(), key.second >= 0 ? 1u : 0u);
    EXPECT_EQ(values_of(p, index), values);
  }
}

}  // namespace
}  // namespace tally::core
