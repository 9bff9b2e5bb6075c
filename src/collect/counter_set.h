// Counting events per CPU (tally stat): one perf event per (event, CPU), per-node events on
// the first CPU of each NUMA node only, read with time_enabled / time_running so that
// multiplexed counters show how much of an interval they really counted.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collect/cpu_topology.h"
#include "collect/event_spec.h"
#include "collect/perf_open.h"
#include "core/error.h"

namespace tally::collect {

struct CounterRequest {
  std::string label;  // miniprof's EVENT_NAME, e.g. "CLK_UNHALTED"
  EventSpec event;
  bool per_node = false;  // counted once per NUMA node, on its first counted CPU
};

// One counter: event `event` (index into the requests) on CPU `cpu`.
struct CounterSlot {
  size_t event = 0;
  int cpu = 0;
  bool operator==(const CounterSlot&) const = default;
};

// Where each request is counted: every CPU of `cpus` for per-core events; for per-node
// events the lowest CPU of `cpus` in each node (a node none of whose CPUs is counted is
// skipped). Ordered by CPU, then by event: the order miniprof prints its lines in.
std::vector<CounterSlot> place_counters(const std::vector<CounterRequest>& requests,
                                        const std::vector<int>& cpus,
                                        const std::vector<NumaNode>& nodes);

// What a counter read gives with PERF_FORMAT_TOTAL_TIME_ENABLED | _RUNNING, or how much
// each of the three grew between two reads.
struct CounterCounts {
  uint64_t value = 0;
  uint64_t enabled_ns = 0;
  uint64_t running_ns = 0;
  // running / enabled, 0 when the counter was not enabled at all.
  double running_fraction() const;
};
using CounterValue = CounterCounts;     // as read
using CounterIncrease = CounterCounts;  // between two reads
CounterIncrease increase_between(const CounterValue& before, const CounterValue& now);

class CounterSet {
 public:
  // Opens every slot, disabled. pid -1 counts everything that runs on each CPU
  // (system-wide, miniprof's way; needs perf_event_paranoid <= 0 or CAP_PERFMON); a pid
  // counts that process and the threads and children it creates, per CPU, from its exec
  // when `enable_on_exec`. Fails with one line per event that cannot be opened.
  static core::Expected<CounterSet> open(const std::vector<CounterRequest>& requests,
                                         std::vector<CounterSlot> slots, pid_t pid,
                                         bool enable_on_exec);

  core::Status enable();
  core::Status disable();
  const std::vector<CounterSlot>& slots() const { return slots_; }
  // The counter of slots()[index] now.
  core::Expected<CounterValue> read(size_t index) const;

 private:
  std::vector<CounterSlot> slots_;
  std::vector<PerfEventFd> fds_;
};

}  // namespace tally::collect
