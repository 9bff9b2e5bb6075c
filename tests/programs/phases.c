// The timeline test workload (issue 23): one thread in three phases by the clock, burning
// 200 ms in burn_first, sleeping 200 ms in nanosleep (under sleep_phase), burning 200 ms in
// burn_last. Prints "START_NS SLEEP_START_NS SLEEP_END_NS END_NS" (CLOCK_MONOTONIC, the
// clock perf's timestamps use) so that a test can place the phases. Argument: each phase's
// length in milliseconds (default 200).
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static volatile uint64_t sink;

__attribute__((noinline, noclone)) void burn_first(uint64_t ns) {
  uint64_t end = now_ns() + ns;
  while (now_ns() < end)
    for (int i = 0; i < 1000; ++i) sink = sink * 31 + (uint64_t)i;
}

__attribute__((noinline, noclone)) void burn_last(uint64_t ns) {
  uint64_t end = now_ns() + ns;
  while (now_ns() < end)
    for (int i = 0; i < 1000; ++i) sink = sink * 37 + (uint64_t)i;
}

__attribute__((noinline, noclone)) void sleep_phase(uint64_t ns) {
  struct timespec t = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
  while (nanosleep(&t, &t) != 0) {}
}

int main(int argc, char** argv) {
  const uint64_t phase = (argc > 1 ? (uint64_t)atoi(argv[1]) : 200) * 1000000u;
  const uint64_t start = now_ns();
  burn_first(phase);
  const uint64_t sleep_start = now_ns();
  sleep_phase(phase);
  const uint64_t sleep_end = now_ns();
  burn_last(phase);
  printf("%llu %llu %llu %llu\n", (unsigned long long)start, (unsigned long long)sleep_start,
         (unsigned long long)sleep_end, (unsigned long long)now_ns());
  return 0;
}
