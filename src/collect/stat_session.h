// tally stat's counting run: counters opened per CPU, started (with the command, if any),
// read every interval until the command ends, the duration is over, or SIGINT / SIGTERM /
// SIGHUP arrives; then a last, partial interval is read, so nothing counted is lost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collect/counter_set.h"
#include "collect/cpu_topology.h"
#include "collect/trace_clock.h"
#include "core/error.h"

namespace tally::collect {

struct StatOptions {
  std::vector<CounterRequest> events;
  std::vector<int> cpus;         // counted CPUs
  std::vector<NumaNode> nodes;   // for per-node events
  uint64_t interval_ms = 1000;
  uint64_t duration_ms = 0;      // 0: no limit
  std::vector<std::string> command;  // empty: count until interrupted (or the duration)
  // false (miniprof's way): everything that runs on each CPU while the command runs.
  // true: only the command, its threads and its children, still per CPU.
  bool command_only = false;
  TraceClock clock = TraceClock::best();
};

// One counter over one interval: a line of miniprof's trace.
struct TraceLine {
  size_t event = 0;        // index on the command line, from 0
  int cpu = 0;
  uint64_t timestamp = 0;  // options.clock, read just before the CPU's counters
  CounterIncrease increase;
  uint64_t interval = 0;   // logical time, from 1
};

class StatSink {
 public:
  virtual ~StatSink() = default;
  // One interval's lines, ordered by CPU then event. Returns false when the output has
  // gone away (a closed pipe): counting stops.
  virtual bool interval(const std::vector<TraceLine>& lines) = 0;
};

struct StatOutcome {
  uint64_t intervals = 0;
  uint64_t elapsed_ns = 0;  // from the start of counting to the last read
  bool command_ran = false;
  int command_exit_code = 0;  // the command's exit status, 128 + N if killed by signal N
  bool interrupted = false;   // stopped by SIGINT, SIGTERM or SIGHUP
};

core::Expected<StatOutcome> run_stat(const StatOptions& options, StatSink& sink);

}  // namespace tally::collect
