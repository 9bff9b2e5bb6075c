// many_wait_stacks [LEVELS]: sleeps once at the bottom of each of 2^LEVELS (default 12)
// distinct call paths: at every level the walk goes through left() or right(), so each
// path's user stack differs in its return addresses. More distinct blocking stacks than
// a BPF stack map keeps without collisions: tally's BPF off-CPU recorder must say how many
// spans kept kernel frames only.
#include <stdlib.h>
#include <time.h>

static void walk(int level, unsigned path);

__attribute__((noinline)) static void left(int level, unsigned path) { walk(level, path); __asm__ volatile(""); }
__attribute__((noinline)) static void right(int level, unsigned path) { walk(level, path); __asm__ volatile(""); }

__attribute__((noinline)) static void walk(int level, unsigned path) {
  if (level == 0) {
    struct timespec pause = {0, 1000};
    nanosleep(&pause, NULL);
  } else if (path & 1u) {
    left(level - 1, path >> 1);
  } else {
    right(level - 1, path >> 1);
  }
  __asm__ volatile("");
}

int main(int argc, char** argv) {
  int levels = argc > 1 ? atoi(argv[1]) : 12;
  if (levels < 0 || levels > 20) return 2;
  for (unsigned path = 0; path < (1u << levels); ++path) walk(levels, path);
  return 0;
}
