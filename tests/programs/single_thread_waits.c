// A single-threaded process that blocks in glibc's system call wrappers, for the callers
// the frame-pointer walk of a frameless wrapper misses (tally record --off-cpu -g fp): 10
// rounds of sleeping 20 ms in nanosleep (under nap) and reading a timerfd that expires
// after 20 ms (under wait_timer). Without a second thread, glibc's wrappers take their
// single-threaded path: the return address is the word at the stack pointer.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline, noclone)) void nap(long ns) {
  struct timespec t = {.tv_sec = 0, .tv_nsec = ns};
  while (nanosleep(&t, &t) != 0) {}
}

__attribute__((noinline, noclone)) void wait_timer(int timer, long ns) {
  struct itimerspec expiry = {.it_interval = {0, 0}, .it_value = {.tv_sec = 0, .tv_nsec = ns}};
  if (timerfd_settime(timer, 0, &expiry, NULL) != 0) abort();
  uint64_t expirations;
  if (read(timer, &expirations, sizeof expirations) != sizeof expirations) abort();
}

int main(void) {
  int timer = timerfd_create(CLOCK_MONOTONIC, 0);
  if (timer < 0) return 1;
  for (int i = 0; i < 10; ++i) {
    nap(20 * 1000 * 1000);
    wait_timer(timer, 20 * 1000 * 1000);
  }
  return 0;
}
