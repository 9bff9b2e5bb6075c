// The timestamp of tally stat's trace lines. miniprof prints the CPU's cycle counter
// (rdtsc); tally does the same where the time stamp counter runs at a constant rate and
// keeps running in idle states (x86-64 with constant_tsc and nonstop_tsc in /proc/cpuinfo,
// the common case, virtual machines included), and prints CLOCK_MONOTONIC nanoseconds
// everywhere else or when asked to.
#pragma once

#include <cstdint>
#include <string_view>

namespace tally::collect {

enum class TraceClockKind { tsc, monotonic };

// Whether this machine has a TSC worth printing (see above).
bool tsc_is_reliable();

class TraceClock {
 public:
  explicit TraceClock(TraceClockKind kind) : kind_(kind) {}
  // tsc where reliable, else monotonic.
  static TraceClock best();
  TraceClockKind kind() const { return kind_; }
  std::string_view name() const { return kind_ == TraceClockKind::tsc ? "tsc" : "monotonic"; }
  uint64_t now() const;

 private:
  TraceClockKind kind_;
};

// CLOCK_MONOTONIC in nanoseconds: what the sampler, tally stat's intervals and the daemon
// time themselves by.
uint64_t monotonic_ns();

}  // namespace tally::collect
