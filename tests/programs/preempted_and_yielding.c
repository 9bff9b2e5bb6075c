// preempted_and_yielding [MS]: two threads on one CPU for MS milliseconds (default 400).
// One computes in spin() and never enters the kernel on purpose: it leaves the CPU only when
// the scheduler takes it on its way back to user space (after a timer interrupt). The other
// calls sched_yield() in yield_loop(): it leaves the CPU runnable, inside a system call.
// tally's BPF off-CPU recorder keeps kernel frames for the second (do_sched_yield) and not
// for the first (the interrupt's exit path says nothing of why it waits).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

static long long deadline_ns;

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);  // the vDSO: no system call
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

__attribute__((noinline)) static void spin(void) {
  volatile unsigned long sum = 0;
  while (now_ns() < deadline_ns)
    for (int i = 0; i < 10000; ++i) sum += (unsigned long)i * 7u;
}

__attribute__((noinline)) static void yield_loop(void) {
  while (now_ns() < deadline_ns) sched_yield();
}

static void* spinner(void* unused) {
  (void)unused;
  spin();
  return NULL;
}

int main(int argc, char** argv) {
  const long ms = argc > 1 ? atol(argv[1]) : 400;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return 3;  // inherited by the thread
  deadline_ns = now_ns() + ms * 1000000LL;
  pthread_t thread;
  if (pthread_create(&thread, NULL, spinner, NULL) != 0) return 3;
  yield_loop();
  pthread_join(thread, NULL);
  return 0;
}
