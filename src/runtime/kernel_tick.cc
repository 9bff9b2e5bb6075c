#include "runtime/kernel_tick.h"

#include <time.h>
#include <unistd.h>

namespace tally::runtime {

uint64_t kernel_tick_ns() {
  timespec res{};
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0)
    return static_cast<uint64_t>(res.tv_nsec);
  long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? 1'000'000'000u / static_cast<uint64_t>(hz) : 10'000'000u;
}

}  // namespace tally::runtime
