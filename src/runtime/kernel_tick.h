// The kernel tick: the interval at which CPU-time timers (setitimer ITIMER_PROF,
// timer_create on a CPU clock) are checked, hence the finest sampling interval they give.
#pragma once

#include <cstdint>

namespace tally::runtime {

// In nanoseconds: the resolution of CLOCK_MONOTONIC_COARSE, which the kernel advances once
// a tick (1/CONFIG_HZ: 4 ms at HZ=250); 1/sysconf(_SC_CLK_TCK) if that clock is missing.
uint64_t kernel_tick_ns();

}  // namespace tally::runtime
