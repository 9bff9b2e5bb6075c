/* The split workload (func_a/b/c/d do 4/3/2/1 units of work per round, as
 * ../shared/fixtures/bin/split does), which also measures the CPU time each function really
 * took, with its thread's own clock around every call. The accuracy test compares a profile
 * with that measured split, not with the split of iterations: on a shared machine the time
 * an iteration takes changes while the program runs (another test, a hyperthread sibling),
 * and that change is not the profiler's error.
 *
 * Usage: measured_split -r ROUNDS -u ITERATIONS_PER_UNIT -t THREADS
 * Prints one line: "cpu_ns a=N b=N c=N d=N" (all threads added together). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "burn_body.h"

#define NOINLINE __attribute__((noinline))

static _Atomic uint64_t cpu_ns[4];
static long rounds = 1;
static uint64_t unit = 1000000;

NOINLINE void func_a(uint64_t n) { BURN_BODY(n, 0xa1); }
NOINLINE void func_b(uint64_t n) { BURN_BODY(n, 0xb3); }
NOINLINE void func_c(uint64_t n) { BURN_BODY(n, 0xc5); }
NOINLINE void func_d(uint64_t n) { BURN_BODY(n, 0xd7); }

static uint64_t thread_cpu_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void timed(int which, void (*function)(uint64_t), uint64_t units) {
  uint64_t start = thread_cpu_ns();
  function(units * unit);
  atomic_fetch_add(&cpu_ns[which], thread_cpu_ns() - start);
}

NOINLINE static void* run_rounds(void* unused) {
  (void)unused;
  for (long r = 0; r < rounds; ++r) {
    timed(0, func_a, 4);
    timed(1, func_b, 3);
    timed(2, func_c, 2);
    timed(3, func_d, 1);
  }
  return NULL;
}

int main(int argc, char** argv) {
  long threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-r")) {
      rounds = atol(argv[i + 1]);
    } else if (!strcmp(argv[i], "-u")) {
      unit = strtoull(argv[i + 1], NULL, 10);
    } else if (!strcmp(argv[i], "-t")) {
      threads = atol(argv[i + 1]);
    } else {
      fprintf(stderr, "usage: %s [-r ROUNDS] [-u ITERATIONS] [-t THREADS]\n", argv[0]);
      return 2;
    }
  }
  if (threads < 1 || threads > 256 || rounds < 1) {
    fprintf(stderr, "%s: -t must be 1..256 and -r at least 1\n", argv[0]);
    return 2;
  }
  pthread_t workers[256];
  for (long t = 0; t < threads; ++t) pthread_create(&workers[t], NULL, run_rounds, NULL);
  for (long t = 0; t < threads; ++t) pthread_join(workers[t], NULL);
  printf("cpu_ns a=%llu b=%llu c=%llu d=%llu\n", (unsigned long long)cpu_ns[0],
         (unsigned long long)cpu_ns[1], (unsigned long long)cpu_ns[2],
         (unsigned long long)cpu_ns[3]);
  return 0;
}
