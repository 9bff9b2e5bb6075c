// gperftools' environment variables, read in one place: at load (environment.cc's
// constructor: CPUPROFILE, CPUPROFILESIGNAL) and at every start of profiling (these).
#pragma once

#include "runtime/sampler.h"

namespace tally::runtime {

struct SamplingEnvironment {
  int frequency = 100;             // CPUPROFILE_FREQUENCY (gperftools' default 100)
  bool realtime = false;           // CPUPROFILE_REALTIME: wall-clock time
  bool per_thread_timers = false;  // CPUPROFILE_PER_THREAD_TIMERS: POSIX timers, not perf_event
  Unwinder unwinder = Unwinder::cfi;  // CPUPROFILE_UNWIND=fp|cfi (tally's own; cfi on x86-64 only)
};

// Reads them now; a bad value gets a message on stderr and the default.
SamplingEnvironment sampling_environment();

}  // namespace tally::runtime
