#include "burn.h"

#include <time.h>

// The linker defines __start_/__stop_ for sections named like C identifiers.
extern "C" const char __start_tally_burn_a[], __stop_tally_burn_a[];
extern "C" const char __start_tally_burn_b[], __stop_tally_burn_b[];

namespace tally::test {

uint64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
}

uint64_t process_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
}

// The clock is read once per 2^16 rounds of arithmetic: nearly every tick lands in the loop.
#define TALLY_BURNER(name)                                                               \
  __attribute__((section("tally_" #name), noinline, noipa)) void name(uint64_t cpu_ns) { \
    const uint64_t until = thread_cpu_ns() + cpu_ns;                                      \
    volatile uint64_t sink = 1;                                                           \
    do {                                                                                  \
      for (unsigned i = 0; i < (1u << 16); ++i) sink = sink * 2862933555777941757u + 3;   \
    } while (thread_cpu_ns() < until);                                                    \
  }

TALLY_BURNER(burn_a)
TALLY_BURNER(burn_b)

CodeRange burn_a_range() {
  return {reinterpret_cast<uint64_t>(__start_tally_burn_a),
          reinterpret_cast<uint64_t>(__stop_tally_burn_a)};
}
CodeRange burn_b_range() {
  return {reinterpret_cast<uint64_t>(__start_tally_burn_b),
          reinterpret_cast<uint64_t>(__stop_tally_burn_b)};
}

Histogram::Histogram(CodeRange r) : range(r), counters((r.end - r.start + 1) / 2) {}

prof Histogram::entry() {
  prof p{};
  p.pr_base = counters.data();
  p.pr_size = counters.size() * sizeof(uint16_t);
  p.pr_off = range.start;
  p.pr_scale = 65536;
  return p;
}

uint64_t Histogram::total() const {
  uint64_t n = 0;
  for (uint16_t c : counters) n += c;
  return n;
}

}  // namespace tally::test
