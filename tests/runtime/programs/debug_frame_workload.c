/* The .debug_frame workload: built -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables
 * -fno-unwind-tables -g, so that its functions have call-frame rules only in .debug_frame
 * (not loaded: libtally reads them from the file), none in .eh_frame. Knows nothing of any
 * profiler.
 *
 * usage: debug_frame_workload [SECONDS]
 *   main and two threads each run rounds of a 42-deep mutual recursion
 *   debug_frame_even/debug_frame_odd down to debug_frame_leaf. */
#include <pthread.h>
#include <stdlib.h>

#include "burn_cpu.h"

enum { kRecursionDepth = 42 };

/* Each returns something its caller adds to: no call here is a tail call. */
NOINLINE uint64_t debug_frame_leaf(double seconds) {
  BURN(seconds);
  return burn_sink & 1;
}
NOINLINE uint64_t debug_frame_odd(int depth, double seconds);
NOINLINE uint64_t debug_frame_even(int depth, double seconds) {
  uint64_t result = depth == 0 ? debug_frame_leaf(seconds) : debug_frame_odd(depth - 1, seconds);
  return result + (burn_sink & 2);
}
NOINLINE uint64_t debug_frame_odd(int depth, double seconds) {
  uint64_t result = depth == 0 ? debug_frame_leaf(seconds) : debug_frame_even(depth - 1, seconds);
  return result + (burn_sink & 4);
}

static double seconds_each = 0.5;

NOINLINE static void* debug_frame_rounds(void* unused) {
  (void)unused;
  uint64_t total = 0;
  for (int round = 0; round < 20; ++round) total += debug_frame_even(kRecursionDepth - 1, seconds_each / 20);
  burn_sink += total;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) seconds_each = atof(argv[1]);
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, debug_frame_rounds, NULL);
  debug_frame_rounds(NULL);
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  return 0;
}
