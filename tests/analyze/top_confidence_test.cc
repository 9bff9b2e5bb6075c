// The ± column of `tally top` on a profile of two events (as `tally record -e cpu-clock -e
// page-faults` writes: a "samples" column, and each sample has a value in one event's
// column only): the interval of an event's share counts that event's samples, not the
// other event's.
#include <gtest/gtest.h>

#include <string>

#include "analyze/confidence.h"
#include "analyze/top.h"
#include "core/profile.h"

namespace tally::analyze {
namespace {

// 300 cpu-clock samples (1 ms each): 200 in hot, 100 in cold. 20 page-fault samples
// (11 faults each): 15 in hot, 5 in cold.
core::Profile two_event_profile() {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu-clock", "nanoseconds"),
                    p.value_type("page-faults", "count")};
  const auto hot_fn = p.add_function({.name = p.intern("hot")});
  const auto cold_fn = p.add_function({.name = p.intern("cold")});
  const auto hot = p.add_location({.address = 0x10, .lines = {{.function = hot_fn}}});
  const auto cold = p.add_location({.address = 0x20, .lines = {{.function = cold_fn}}});
  const auto add = [&](core::LocationId leaf, int64_t cpu, int64_t faults, int times) {
    const core::LocationId stack[] = {leaf};
    const int64_t values[] = {1, cpu, faults};
    for (int i = 0; i < times; ++i) p.add_sample(stack, values);
  };
  add(hot, 1'000'000, 0, 200);
  add(cold, 1'000'000, 0, 100);
  add(hot, 0, 11, 15);
  add(cold, 0, 11, 5);
  return p;
}

TopOptions of_value(const std::string& sample_index) {
  TopOptions options;
  options.sample_index = sample_index;
  return options;
}

const TopRow& row(const TopReport& r, const std::string& name) {
  for (const TopRow& row : r.rows)
    if (row.name == name) return row;
  ADD_FAILURE() << name << " is not in the report";
  static const TopRow none;
  return none;
}

TEST(TopConfidence, EachEventsIntervalCountsItsOwnSamples) {
  const core::Profile p = two_event_profile();

  auto faults = compute_top(p, of_value("page-faults"));
  ASSERT_TRUE(faults) << faults.error().message;
  EXPECT_EQ(faults->total, 220);
  EXPECT_EQ(faults->total_samples, 20);
  EXPECT_EQ(row(*faults, "hot").flat, 165);
  EXPECT_EQ(row(*faults, "hot").flat_samples, 15);
  // 15 of 20: 1.96 * sqrt(0.75 * 0.25 / 20) = 18.98 points, not the 6.9 that counting
  // all 320 samples would claim.
  EXPECT_NEAR(share_interval_95(row(*faults, "hot").flat_samples, faults->total_samples), 18.98,
              0.01);

  auto cpu = compute_top(p, of_value("cpu-clock"));
  ASSERT_TRUE(cpu) << cpu.error().message;
  EXPECT_EQ(cpu->total_samples, 300);
  EXPECT_EQ(row(*cpu, "cold").flat_samples, 100);

  // The samples column itself counts every sample.
  auto all = compute_top(p, of_value("samples"));
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->total_samples, 320);
  EXPECT_EQ(row(*all, "hot").flat_samples, 215);
}

}  // namespace
}  // namespace tally::analyze
