// Where counters go (per CPU, per node), what an interval's increase is, and a real
// CounterSet on this process.
#include <linux/perf_event.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "collect/counter_set.h"

namespace tally::collect {
namespace {

CounterRequest request(const char* label, const char* event, bool per_node) {
  auto spec = parse_event(event, CpuVendor::amd);
  EXPECT_TRUE(spec) << event;
  return CounterRequest{label, *spec, per_node};
}

TEST(PlaceCounters, PerCoreEverywherePerNodeOnEachNodesFirstCountedCpu) {
  std::vector<CounterRequest> requests{request("CLK", "task-clock", false),
                                       request("DRAM", "0x8E0", true),
                                       request("CS", "cs", false)};
  std::vector<NumaNode> nodes{{0, {0, 1, 2, 3}}, {1, {4, 5, 6, 7}}};
  // Every CPU: per-node events on CPUs 0 and 4; ordered by CPU, then event.
  std::vector<CounterSlot> expected;
  for (int cpu = 0; cpu < 8; ++cpu) {
    expected.push_back({0, cpu});
    if (cpu == 0 || cpu == 4) expected.push_back({1, cpu});
    expected.push_back({2, cpu});
  }
  EXPECT_EQ(place_counters(requests, {7, 6, 5, 4, 3, 2, 1, 0}, nodes), expected);
  // -C 2,5-6: node 0 counted on CPU 2, node 1 on CPU 5.
  EXPECT_EQ(place_counters(requests, {2, 5, 6}, nodes),
            (std::vector<CounterSlot>{{0, 2}, {1, 2}, {2, 2}, {0, 5}, {1, 5}, {2, 5}, {0, 6}, {2, 6}}));
  // -C 5: node 0 has no counted CPU, so its per-node events are not counted.
  EXPECT_EQ(place_counters(requests, {5}, nodes),
            (std::vector<CounterSlot>{{0, 5}, {1, 5}, {2, 5}}));
}

TEST(CounterIncrease, DifferenceOfTwoReads) {
  CounterIncrease up = increase_between({100, 1000, 500}, {350, 3000, 1500});
  EXPECT_EQ(up.value, 250u);
  EXPECT_EQ(up.enabled_ns, 2000u);
  EXPECT_EQ(up.running_ns, 1000u);
  EXPECT_DOUBLE_EQ(up.running_fraction(), 0.5);
  // Never enabled in the interval (a command that did not run on that CPU): 0, not NaN.
  EXPECT_EQ(increase_between({5, 10, 10}, {5, 10, 10}).running_fraction(), 0.0);
  EXPECT_DOUBLE_EQ(increase_between({}, {7, 10, 10}).running_fraction(), 1.0);
}

TEST(CounterSet, CountsThisProcessPerCpu) {
  std::vector<CounterRequest> requests{request("CLK", "task-clock", false)};
  std::vector<int> cpus = online_cpus();
  auto slots = place_counters(requests, cpus, numa_nodes(cpus));
  auto set = CounterSet::open(requests, slots, getpid(), false);
  ASSERT_TRUE(set) << set.error().message;
  ASSERT_EQ(set->slots().size(), cpus.size());
  ASSERT_TRUE(set->enable());
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 20000000; ++i) sink = sink + i;
  ASSERT_TRUE(set->disable());
  uint64_t total = 0;
  for (size_t i = 0; i < set->slots().size(); ++i) {
    auto value = set->read(i);
    ASSERT_TRUE(value) << value.error().message;
    EXPECT_LE(value->running_ns, value->enabled_ns);
    total += value->value;
  }
  EXPECT_GT(total, 1000000u) << "20M additions take more than 1 ms of CPU";
}

TEST(CounterSet, OneErrorPerEventNotPerCpu) {
  std::vector<CounterRequest> requests{request("CYC", "cycles", false),
                                       request("CLK", "task-clock", false),
                                       request("INS", "instructions", false)};
  std::vector<int> cpus = online_cpus();
  auto set = CounterSet::open(requests, place_counters(requests, cpus, numa_nodes(cpus)),
                              getpid(), false);
  if (set) GTEST_SKIP() << "this machine has hardware counters";
  const std::string& message = set.error().message;
  EXPECT_EQ(set.error().kind, core::ErrorKind::unsupported);
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  EXPECT_NE(message.find("event 0 (CYC): event 'cycles' is not supported on this machine"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("event 2 (INS): event 'instructions' is not supported on this machine"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("CLK"), std::string::npos) << message;
}

}  // namespace
}  // namespace tally::collect
