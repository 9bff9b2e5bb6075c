/* Unblocks SIGPROF (blocked across the exec that started it) and exits 0: a SIGPROF that
   came pending through the exec terminates it instead. */
#include <signal.h>

int main(void) {
  sigset_t prof_only;
  sigemptyset(&prof_only);
  sigaddset(&prof_only, SIGPROF);
  sigprocmask(SIG_UNBLOCK, &prof_only, 0);
  return 0;
}
