/* The shared-library workload (lib_hot 5, main_local 3, lib_cold 2 units of work a round,
 * as ../shared/fixtures/bin/shlib_main does: about 50/30/20 %), main_local in this
 * executable and lib_hot/lib_cold in libmeasuredshlib.so, which measures the CPU time each
 * function really took with its thread's own clock around every call: the truth a profile's
 * split across the two images is held to (see measured_split.c for why iterations are not).
 *
 * Usage: measured_shlib -r ROUNDS -u ITERATIONS_PER_UNIT
 * Prints one line: "cpu_ns lib_hot=N main_local=N lib_cold=N". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "burn_body.h"

#define NOINLINE __attribute__((noinline))

void lib_hot(uint64_t n);
void lib_cold(uint64_t n);

NOINLINE void main_local(uint64_t n) { BURN_BODY(n, 0x3d7); }

static uint64_t thread_cpu_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static uint64_t cpu_ns[3];
static uint64_t unit = 1000000;

static void timed(int which, void (*function)(uint64_t), uint64_t units) {
  uint64_t start = thread_cpu_ns();
  function(units * unit);
  cpu_ns[which] += thread_cpu_ns() - start;
}

NOINLINE static void run_rounds(long rounds) {
  for (long r = 0; r < rounds; ++r) {
    timed(0, lib_hot, 5);
    timed(1, main_local, 3);
    timed(2, lib_cold, 2);
  }
}

int main(int argc, char** argv) {
  long rounds = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-r")) {
      rounds = atol(argv[i + 1]);
    } else if (!strcmp(argv[i], "-u")) {
      unit = strtoull(argv[i + 1], NULL, 10);
    } else {
      fprintf(stderr, "usage: %s [-r ROUNDS] [-u ITERATIONS]\n", argv[0]);
      return 2;
    }
  }
  if (rounds < 1) {
    fprintf(stderr, "%s: -r must be at least 1\n", argv[0]);
    return 2;
  }
  run_rounds(rounds);
  printf("cpu_ns lib_hot=%llu main_local=%llu lib_cold=%llu\n", (unsigned long long)cpu_ns[0],
         (unsigned long long)cpu_ns[1], (unsigned long long)cpu_ns[2]);
  return 0;
}
