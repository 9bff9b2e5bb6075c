// A lock convoy (issue 23): 4 threads take one mutex in turn, each holding it 1 ms per
// round (by the clock), so that three of them wait in futex_wait at any time. The waits
// are under take_lock, the caller of pthread_mutex_lock. Argument: rounds per thread
// (default 60).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds = 60;
static volatile uint64_t sink;
static volatile int acquisitions;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline, noclone)) void hold(uint64_t ns) {
  uint64_t end = now_ns() + ns;
  while (now_ns() < end)
    for (int i = 0; i < 1000; ++i) sink = sink * 31 + (uint64_t)i;
}

// The count after the call keeps it a call (not a tail jump), so take_lock stays on the
// stack of the wait.
__attribute__((noinline, noclone)) void take_lock(void) {
  pthread_mutex_lock(&lock);
  acquisitions = acquisitions + 1;
}

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < rounds; ++i) {
    take_lock();
    hold(1000 * 1000);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) rounds = atoi(argv[1]);
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i)
    if (pthread_create(&threads[i], NULL, worker, NULL) != 0) return 1;
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  return 0;
}
