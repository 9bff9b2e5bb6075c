/* What the test programs burn CPU with: BURN(seconds) spins in the caller's frame until the
 * calling thread has used that much CPU time (its own clock, so the figure a profile shows
 * is known exactly whatever else the machine runs). */
#ifndef TALLY_TESTS_RUNTIME_BURN_CPU_H_
#define TALLY_TESTS_RUNTIME_BURN_CPU_H_

#include <stdint.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t burn_sink;

static double thread_cpu_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

#define BURN(seconds)                                                                \
  do {                                                                               \
    double end_ = thread_cpu_seconds() + (seconds);                                  \
    while (thread_cpu_seconds() < end_) {                                            \
      for (int i_ = 0; i_ < 100000; ++i_) burn_sink = burn_sink * 31 + (uint64_t)i_; \
    }                                                                                \
  } while (0)

#endif /* TALLY_TESTS_RUNTIME_BURN_CPU_H_ */
