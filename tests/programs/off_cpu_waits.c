// The off-CPU test workload (issue 23): the main thread loops 20 times over burning 40 ms
// (by the clock, so that a loaded machine does not stretch it), sleeping 30 ms in
// nanosleep (under nap) and waiting 30 ms on a pipe that a second thread answers after
// 30 ms (under wait_pipe). Prints "TID LIFETIME_NS BURN_NS NAP_NS WAIT_PIPE_NS" of the main
// thread on stdout, by its own clock: the truth its wall time is held to (on a loaded
// machine burn overruns its 40 ms by the time slice it was preempted in at the end, and the
// waits by their wake-up latency). Argument: the number of rounds (default 20).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int request_pipe[2], answer_pipe[2];

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static volatile uint64_t sink;

__attribute__((noinline, noclone)) void burn(uint64_t ns) {
  uint64_t end = now_ns() + ns;
  while (now_ns() < end)
    for (int i = 0; i < 1000; ++i) sink = sink * 31 + (uint64_t)i;
}

__attribute__((noinline, noclone)) void nap(uint64_t ns) {
  struct timespec t = {.tv_sec = 0, .tv_nsec = (long)ns};
  while (nanosleep(&t, &t) != 0) {}
}

__attribute__((noinline, noclone)) void wait_pipe(void) {
  char byte = 1;
  if (write(request_pipe[1], &byte, 1) != 1) abort();
  if (read(answer_pipe[0], &byte, 1) != 1) abort();
}

static void* answerer(void* arg) {
  (void)arg;
  char byte;
  struct timespec pause = {.tv_sec = 0, .tv_nsec = 30 * 1000 * 1000};
  while (read(request_pipe[0], &byte, 1) == 1) {
    nanosleep(&pause, NULL);
    if (write(answer_pipe[1], &byte, 1) != 1) abort();
  }
  return NULL;
}

int main(int argc, char** argv) {
  const uint64_t start = now_ns();
  const int rounds = argc > 1 ? atoi(argv[1]) : 20;
  if (pipe(request_pipe) != 0 || pipe(answer_pipe) != 0) return 1;
  pthread_t thread;
  if (pthread_create(&thread, NULL, answerer, NULL) != 0) return 1;
  uint64_t spent[3] = {0, 0, 0};
  for (int i = 0; i < rounds; ++i) {
    uint64_t t0 = now_ns();
    burn(40 * 1000 * 1000);
    uint64_t t1 = now_ns();
    nap(30 * 1000 * 1000);
    uint64_t t2 = now_ns();
    wait_pipe();
    uint64_t t3 = now_ns();
    spent[0] += t1 - t0;
    spent[1] += t2 - t1;
    spent[2] += t3 - t2;
  }
  close(request_pipe[1]);
  pthread_join(thread, NULL);
  printf("%d %llu %llu %llu %llu\n", (int)gettid(), (unsigned long long)(now_ns() - start),
         (unsigned long long)spent[0], (unsigned long long)spent[1], (unsigned long long)spent[2]);
  return 0;
}
