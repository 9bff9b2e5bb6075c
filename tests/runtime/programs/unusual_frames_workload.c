/* libc's unusual frames under the CFI walk (issue 20), built -O2 -fomit-frame-pointer.
 * Knows nothing of any profiler.
 *
 * usage: unusual_frames_workload MODE [SECONDS]
 *   ucontext  two ucontext coroutines (makecontext on stacks of their own) handing over
 *             to each other with swapcontext every few microseconds: coroutine_work runs
 *             under coroutine_body, whose caller is libc's __start_context.
 *   longjmp   jump_round: sigsetjmp, then jump_down three frames deep to jump_leaf, which
 *             siglongjmps back (every few microseconds), and longjmp from a second path;
 *             each tenth of the time a vfork whose child _exits at once. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "burn_cpu.h"

static NOINLINE void spin(int rounds) {
  for (int i = 0; i < rounds; ++i) burn_sink = burn_sink * 31 + (uint64_t)i;
}

/* ---- ucontext ---- */
static ucontext_t main_context, coroutines[2];
static double ucontext_end;
static uint64_t switches;

NOINLINE void coroutine_work(int which) {
  spin(which == 0 ? 2000 : 4000);
  burn_sink += 1; /* not a tail call */
}

NOINLINE void coroutine_body(int which) {
  while (thread_cpu_seconds() < ucontext_end) {
    coroutine_work(which);
    ++switches;
    swapcontext(&coroutines[which], &coroutines[1 - which]);
  }
  /* Returning ends this coroutine at its uc_link (main); the other one is never resumed. */
}

static int run_ucontext(double seconds) {
  enum { kStackBytes = 256 * 1024 };
  ucontext_end = thread_cpu_seconds() + seconds;
  for (int i = 0; i < 2; ++i) {
    if (getcontext(&coroutines[i]) != 0) return 1;
    coroutines[i].uc_stack.ss_sp = malloc(kStackBytes);
    coroutines[i].uc_stack.ss_size = kStackBytes;
    coroutines[i].uc_link = &main_context;
    makecontext(&coroutines[i], (void (*)(void))coroutine_body, 1, i);
  }
  if (swapcontext(&main_context, &coroutines[0]) != 0) return 1;
  printf("%llu switches\n", (unsigned long long)switches);
  return 0;
}

/* ---- longjmp ---- */
static sigjmp_buf jump_target;
static jmp_buf plain_target;
static uint64_t jumps;
static volatile int jumping = 1; /* always: but the compiler must not know it */

NOINLINE void jump_leaf(int how) {
  spin(200);
  ++jumps;
  if (!jumping) return;
  if (how == 0) siglongjmp(jump_target, 1);
  longjmp(plain_target, 1);
}
NOINLINE void jump_down(int depth, int how) {
  if (depth == 0) jump_leaf(how);
  else jump_down(depth - 1, how);
  burn_sink += 1; /* not a tail call */
}
NOINLINE void jump_round(int how) {
  if (how == 0) {
    if (sigsetjmp(jump_target, 1) == 0) jump_down(3, how);
  } else {
    if (setjmp(plain_target) == 0) jump_down(3, how);
  }
}
NOINLINE void vfork_round(void) {
  pid_t child = vfork();
  if (child == 0) _exit(0);
  if (child > 0) waitpid(child, NULL, 0);
}

static int run_longjmp(double seconds) {
  double end = thread_cpu_seconds() + seconds;
  uint64_t rounds = 0, forks = 0;
  while (thread_cpu_seconds() < end) {
    for (int i = 0; i < 100; ++i) jump_round(i & 1);
    rounds += 100;
    if (rounds % 2000 == 0) {
      vfork_round();
      ++forks;
    }
  }
  printf("%llu jumps, %llu vforks\n", (unsigned long long)jumps, (unsigned long long)forks);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: unusual_frames_workload ucontext|longjmp [SECONDS]\n");
    return 2;
  }
  double seconds = argc > 2 ? atof(argv[2]) : 1.0;
  if (strcmp(argv[1], "ucontext") == 0) return run_ucontext(seconds);
  if (strcmp(argv[1], "longjmp") == 0) return run_longjmp(seconds);
  fprintf(stderr, "unusual_frames_workload: unknown mode %s\n", argv[1]);
  return 2;
}
