// deep_stack_waits [N]: sleeps N times (default 50) for 1 ms in nanosleep, called from
// sleep_deep(), whose frame holds a 12 KiB buffer, as SQLite's commit path holds 8-16 KiB
// of frames above its fdatasync. Built without frame pointers: only -g dwarf unwinds it,
// and only from a copy of the user stack deeper than 12 KiB.
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned char sink;

__attribute__((noinline)) static void nap(void) {
  struct timespec pause = {0, 1000000};
  nanosleep(&pause, NULL);
}

__attribute__((noinline)) static void sleep_deep(int round) {
  unsigned char buffer[12 * 1024];
  memset(buffer, round, sizeof buffer);
  nap();
  sink = buffer[round % sizeof buffer];  // keeps the buffer live across the wait
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 50;
  for (int round = 0; round < rounds; ++round) sleep_deep(round);
  return 0;
}
