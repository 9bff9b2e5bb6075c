// Profile::merge_identical_samples: samples whose stacks and labels both match are summed
// into the first of them; everything else keeps its place.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "core/profile.h"

namespace tally::core {
namespace {

using Stack = std::vector<LocationId>;
using Values = std::vector<int64_t>;
using Labels = std::vector<Label>;

Stack stack_of(const Profile& p, size_t i) { return {p.stack(i).begin(), p.stack(i).end()}; }
Values values_of(const Profile& p, size_t i) { return {p.values(i).begin(), p.values(i).end()}; }
Labels labels_of(const Profile& p, size_t i) { return {p.labels(i).begin(), p.labels(i).end()}; }

class MergeIdenticalSamples : public ::testing::Test {
 protected:
  void SetUp() override {
    p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  }
  Profile p;
};

TEST_F(MergeIdenticalSamples, SumsEqualStacksIntoTheFirstOccurrence) {
  p.add_sample(Stack{1, 2}, Values{1, 10});
  p.add_sample(Stack{2, 1}, Values{2, 20});  // same frames, other order: a different stack
  p.add_sample(Stack{1, 2}, Values{3, 30});
  p.add_sample(Stack{1}, Values{4, 40});      // a prefix is a different stack
  p.add_sample(Stack{1, 2, 3}, Values{5, 50});
  p.add_sample(Stack{1, 2}, Values{6, 60});
  p.add_sample(Stack{}, Values{7, 70});
  p.add_sample(Stack{}, Values{8, 80});
  p.merge_identical_samples();

  ASSERT_EQ(p.sample_count(), 5u);
  EXPECT_EQ(stack_of(p, 0), (Stack{1, 2}));
  EXPECT_EQ(values_of(p, 0), (Values{1 + 3 + 6, 10 + 30 + 60}));
  EXPECT_EQ(stack_of(p, 1), (Stack{2, 1}));
  EXPECT_EQ(values_of(p, 1), (Values{2, 20}));
  EXPECT_EQ(stack_of(p, 2), (Stack{1}));
  EXPECT_EQ(values_of(p, 2), (Values{4, 40}));
  EXPECT_EQ(stack_of(p, 3), (Stack{1, 2, 3}));
  EXPECT_EQ(values_of(p, 3), (Values{5, 50}));
  EXPECT_EQ(stack_of(p, 4), (Stack{}));
  EXPECT_EQ(values_of(p, 4), (Values{15, 150}));
}

// Consecutive samples with equal labels share one copy of them (add_sample); merging moves
// labels down over merged-away ones, and a run's labels must survive that move.
TEST_F(MergeIdenticalSamples, RunsOfSamplesWithTheSameLabelsMergeAndKeepThem) {
  const Labels first{{.key = p.intern("a"), .str = p.intern("x")}, {.key = p.intern("b"), .num = 1}};
  const Labels second{{.key = p.intern("c"), .num = 7}};
  p.add_sample(Stack{9}, Values{0, 0}, Labels{{.key = p.intern("zero"), .num = 1}});
  // A sample merged away before the runs: the labels after it move down, over themselves.
  p.add_sample(Stack{5}, Values{8, 80}, Labels{{.key = p.intern("d"), .num = 1}});
  p.add_sample(Stack{6}, Values{9, 90}, Labels{{.key = p.intern("e"), .num = 2}});
  p.add_sample(Stack{5}, Values{10, 100}, Labels{{.key = p.intern("d"), .num = 1}});
  p.add_sample(Stack{1}, Values{1, 10}, first);
  p.add_sample(Stack{2}, Values{2, 20}, first);
  p.add_sample(Stack{1}, Values{3, 30}, first);  // merges into the first {1}
  p.add_sample(Stack{3}, Values{4, 40}, first);
  p.add_sample(Stack{3}, Values{5, 50}, second);
  p.add_sample(Stack{3}, Values{6, 60}, second);  // merges into the {3} of `second`
  p.add_sample(Stack{4}, Values{7, 70});
  p.merge_identical_samples();  // moves labels down: they must come through

  ASSERT_EQ(p.sample_count(), 8u);
  // The labels of each sample, found by its values (unique here), by name.
  auto labels_text = [&](int64_t samples) {
    for (size_t i = 0; i < p.sample_count(); ++i) {
      if (p.values(i)[0] != samples) continue;
      std::string out;
      for (const Label& l : p.labels(i))
        out += std::string(p.str(l.key)) + "=" + (l.str ? std::string(p.str(l.str)) : std::to_string(l.num)) + " ";
      return out;
    }
    return std::string("missing");
  };
  EXPECT_EQ(labels_text(1 + 3), "a=x b=1 ");
  EXPECT_EQ(labels_text(2), "a=x b=1 ");
  EXPECT_EQ(labels_text(4), "a=x b=1 ");
  EXPECT_EQ(labels_text(5 + 6), "c=7 ");
  EXPECT_EQ(labels_text(7), "");
  EXPECT_EQ(labels_text(0), "zero=1 ");
  EXPECT_EQ(labels_text(8 + 10), "d=1 ");
  EXPECT_EQ(labels_text(9), "e=2 ");
}

TEST_F(MergeIdenticalSamples, KeepsSamplesWithDifferentLabelsApart) {
  Label worker{.key = p.intern("thread"), .str = p.intern("worker")};
  Label main_thread{.key = p.intern("thread"), .str = p.intern("main")};
  Label small{.key = p.intern("bytes"), .num = 64};
  Label small_in_kb{.key = p.intern("bytes"), .num = 64, .num_unit = p.intern("kilobytes")};
  Label large{.key = p.intern("bytes"), .num = 65};

  p.add_sample(Stack{1}, Values{1, 1}, Labels{worker});
  p.add_sample(Stack{1}, Values{2, 2}, Labels{main_thread});
  p.add_sample(Stack{1}, Values{4, 4});
  p.add_sample(Stack{1}, Values{8, 8}, Labels{small});
  p.add_sample(Stack{1}, Values{16, 16}, Labels{small_in_kb});
  p.add_sample(Stack{1}, Values{32, 32}, Labels{large});
  p.add_sample(Stack{1}, Values{64, 64}, Labels{worker, small});
  // Repeats of the first, third and last: only these merge.
  p.add_sample(Stack{1}, Values{100, 100}, Labels{worker});
  p.add_sample(Stack{1}, Values{200, 200});
  p.add_sample(Stack{1}, Values{300, 300}, Labels{worker, small});
  p.merge_identical_samples();

  ASSERT_EQ(p.sample_count(), 7u);
  EXPECT_EQ(labels_of(p, 0), (Labels{worker}));
  EXPECT_EQ(values_of(p, 0), (Values{101, 101}));
  EXPECT_EQ(labels_of(p, 1), (Labels{main_thread}));
  EXPECT_EQ(values_of(p, 1), (Values{2, 2}));
  EXPECT_EQ(labels_of(p, 2), (Labels{}));
  EXPECT_EQ(values_of(p, 2), (Values{204, 204}));
  EXPECT_EQ(labels_of(p, 3), (Labels{small}));
  EXPECT_EQ(values_of(p, 3), (Values{8, 8}));
  EXPECT_EQ(labels_of(p, 4), (Labels{small_in_kb}));
  EXPECT_EQ(labels_of(p, 5), (Labels{large}));
  EXPECT_EQ(labels_of(p, 6), (Labels{worker, small}));
  EXPECT_EQ(values_of(p, 6), (Values{364, 364}));
}

TEST_F(MergeIdenticalSamples, SumsSaturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  p.add_sample(Stack{1}, Values{kMax - 1, kMin + 1});
  p.add_sample(Stack{1}, Values{5, -5});
  p.merge_identical_samples();
  ASSERT_EQ(p.sample_count(), 1u);
  EXPECT_EQ(values_of(p, 0), (Values{kMax, kMin}));
}

TEST_F(MergeIdenticalSamples, DistinctSamplesAreUntouched) {
  for (LocationId i = 1; i <= 5000; ++i) p.add_sample(Stack{i, i + 1}, Values{i, -int64_t(i)});
  p.merge_identical_samples();
  ASSERT_EQ(p.sample_count(), 5000u);
  for (LocationId i = 1; i <= 5000; ++i) {
    EXPECT_EQ(stack_of(p, i - 1), (Stack{i, i + 1}));
    EXPECT_EQ(values_of(p, i - 1), (Values{i, -int64_t(i)}));
  }
}

TEST_F(MergeIdenticalSamples, ManyRepeatsCollapseToOnePerStack) {
  // 20000 samples over 300 stacks: merged counts checked against a plain tally.
  std::vector<int64_t> expected(300, 0);
  for (int i = 0; i < 20000; ++i) {
    auto s = static_cast<LocationId>((i * 7919) % 300);
    p.add_sample(Stack{s + 1, 1000}, Values{1, i});
    expected[s] += i;
  }
  p.merge_identical_samples();
  ASSERT_EQ(p.sample_count(), 300u);
  for (size_t k = 0; k < 300; ++k) {
    LocationId s = p.stack(k)[0] - 1;
    EXPECT_EQ(p.values(k)[1], expected[s]);
  }
  EXPECT_EQ(p.total(0), 20000);
}

// Stacks of every length from 0 to 6 over few locations, so that many repeat: each merged
// sample must read back as the first occurrence of its stack with the sum of its values
// (the merge moves stacks down in place, over the ends of the ones before).
TEST_F(MergeIdenticalSamples, RandomStacksOfEveryLengthMergeLikeAMap) {
  std::mt19937 random(12345);
  std::vector<Stack> order;  // first occurrences
  std::map<Stack, Values> sums;
  for (int i = 0; i < 5000; ++i) {
    Stack stack(random() % 7);
    for (LocationId& id : stack) id = static_cast<LocationId>(1 + random() % 3);
    const Values values{static_cast<int64_t>(random() % 5), static_cast<int64_t>(random() % 1000)};
    p.add_sample(stack, values);
    auto [it, fresh] = sums.try_emplace(stack, Values{0, 0});
    if (fresh) order.push_back(stack);
    it->second[0] += values[0];
    it->second[1] += values[1];
  }
  p.merge_identical_samples();
  ASSERT_EQ(p.sample_count(), order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    ASSERT_EQ(stack_of(p, i), order[i]) << i;
    ASSERT_EQ(values_of(p, i), sums[order[i]]) << i;
  }
}

TEST_F(MergeIdenticalSamples, EmptyProfileStaysEmpty) {
  p.merge_identical_samples();
  EXPECT_EQ(p.sample_count(), 0u);
}

}  // namespace
}  // namespace tally::core
