// gperftools' environment, read when libtally is loaded (LD_PRELOAD or -ltally):
// CPUPROFILE starts profiling into that file at once, or, with CPUPROFILESIGNAL, the
// signal toggles profiling into CPUPROFILE.0, .1, ... A profile still running when the
// program returns from main or calls exit() is written then.
// CPUPROFILE_FREQUENCY, CPUPROFILE_REALTIME, CPUPROFILE_PER_THREAD_TIMERS and
// CPUPROFILE_UNWIND are read at every start (sampling_environment(), for the session);
// CPUPROFILE_TIMER_SIGNAL where the signal is chosen (sampler.cc).
#include "runtime/environment.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/session.h"
#include "runtime/stderr_print.h"

namespace tally::runtime {
namespace {

constexpr int kDefaultFrequency = 100;  // gperftools' default
constexpr int kMaxFrequency = 100'000;  // perf's hrtimer floor is 10 us

int frequency_from_environment() {
  const char* text = getenv("CPUPROFILE_FREQUENCY");
  if (text == nullptr || *text == '\0') return kDefaultFrequency;
  char* end = nullptr;
  long frequency = strtol(text, &end, 10);
  if (*end != '\0' || frequency <= 0 || frequency > kMaxFrequency) {
    print_to_stderr("tally: CPUPROFILE_FREQUENCY=%s is not in 1..%d; using %d\n", text, kMaxFrequency,
            kDefaultFrequency);
    return kDefaultFrequency;
  }
  return static_cast<int>(frequency);
}

Unwinder unwinder_from_environment() {
  const char* text = getenv("CPUPROFILE_UNWIND");
  if (text != nullptr && strcmp(text, "fp") == 0) return Unwinder::frame_pointers;
  if (text != nullptr && *text != '\0' && strcmp(text, "cfi") != 0)
    print_to_stderr("tally: CPUPROFILE_UNWIND=%s is not fp or cfi; using the default\n", text);
#if defined(__x86_64__)
  return Unwinder::cfi;
#else
  // The compiled rules are x86-64's (cfi_compiler.h): elsewhere frame pointers.
  return Unwinder::frame_pointers;
#endif
}

bool set_in_environment(const char* name) {
  const char* value = getenv(name);
  return value != nullptr && *value != '\0';
}


void on_toggle_signal(int) { request_toggle(); }

void install_toggle(const char* text, const char* base) {
  char* end = nullptr;
  long signal_number = strtol(text, &end, 10);
  if (*end != '\0' || signal_number < 1 || signal_number >= NSIG) {
    print_to_stderr("tally: CPUPROFILESIGNAL=%s is not a signal number; profiling not started\n", text);
    return;
  }
  int signal = static_cast<int>(signal_number);
  struct sigaction current;
  if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) {
    print_to_stderr("tally: signal %d is already in use; CPUPROFILESIGNAL ignored\n", signal);
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

SamplingEnvironment sampling_environment() {
  SamplingEnvironment environment;
  environment.frequency = frequency_from_environment();
  environment.realtime = set_in_environment("CPUPROFILE_REALTIME");
  environment.per_thread_timers = set_in_environment("CPUPROFILE_PER_THREAD_TIMERS");
  environment.unwinder = unwinder_from_environment();
  return environment;
}

}  // namespace tally::runtime
