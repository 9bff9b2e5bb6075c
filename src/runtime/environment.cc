// gperftools' environment, read when libtally is loaded (LD_PRELOAD or -ltally):
// CPUPROFILE starts profiling into that file at once, or, with CPUPROFILESIGNAL, the
// signal toggles profiling into CPUPROFILE.0, .1, ... A profile still running when the
// program returns from main or calls exit() is written then.
// (CPUPROFILE_FREQUENCY, CPUPROFILE_REALTIME, CPUPROFILE_PER_THREAD_TIMERS and
// CPUPROFILE_TIMER_SIGNAL are read at every start, by the session.)
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/session.h"

namespace tally::runtime {
namespace {

void on_toggle_signal(int) { request_toggle(); }

void install_toggle(const char* text, const char* base) {
  char* end = nullptr;
  long signal_number = strtol(text, &end, 10);
  if (*end != '\0' || signal_number < 1 || signal_number >= NSIG) {
    dprintf(2, "tally: CPUPROFILESIGNAL=%s is not a signal number; profiling not started\n", text);
    return;
  }
  int signal = static_cast<int>(signal_number);
  struct sigaction current;
  if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) {
    dprintf(2, "tally: signal %d is already in use; CPUPROFILESIGNAL ignored\n", signal);
    return;
  }
  enable_toggle(base);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_toggle_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
}

__attribute__((constructor)) void start_from_environment() {
  ensure_initialized();
  char path[PATH_MAX];
  if (!profile_path_from_environment(path, sizeof path)) return;
  if (const char* toggle = getenv("CPUPROFILESIGNAL"); toggle != nullptr && *toggle != '\0') {
    install_toggle(toggle, path);
    return;
  }
  StartOptions options;
  options.from_environment = true;
  start_profiling(path, options);
}

__attribute__((destructor)) void stop_at_exit() { stop_profiling(); }

}  // namespace
}  // namespace tally::runtime
