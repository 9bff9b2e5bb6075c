#include "collect/trace_clock.h"

#include <time.h>

#include <fstream>
#include <sstream>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace tally::collect {

bool tsc_is_reliable() {
#if defined(__x86_64__)
  static const bool reliable = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
      if (line.rfind("flags", 0) != 0) continue;
      std::istringstream flags(line.substr(line.find(':') + 1));
      bool constant = false, nonstop = false;
      std::string flag;
      while (flags >> flag) {
        constant = constant || flag == "constant_tsc";
        nonstop = nonstop || flag == "nonstop_tsc";
      }
      return constant && nonstop;
    }
    return false;
  }();
  return reliable;
#else
  return false;
#endif
}

TraceClock TraceClock::best() {
  return TraceClock(tsc_is_reliable() ? TraceClockKind::tsc : TraceClockKind::monotonic);
}

uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ULL + static_cast<uint64_t>(now.tv_nsec);
}

uint64_t TraceClock::now() const {
#if defined(__x86_64__)
  if (kind_ == TraceClockKind::tsc) return __rdtsc();
#endif
  return monotonic_ns();
}

}  // namespace tally::collect
