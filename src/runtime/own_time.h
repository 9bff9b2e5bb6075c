// CPU time the kernel counts for the profiled process that no sample of the program's own
// code can show, given frames of its own so that the profile's total is the process's CPU
// time (what wait4 and /usr/bin/time report), not less:
//  - [tally: sampling]: each sample's cost between the timer's overflow and the handler
//    re-arming it (the kernel's interrupt and signal delivery, the handler's work),
//    measured per sample as the thread's CPU time the perf_event counter did not count;
//  - [tally: writing the profile]: the service thread, which moves samples to the file;
//  - [not profiled: process start-up]: a profile started from $CPUPROFILE covers the
//    whole run, and the CPU time the process used before libtally's constructor armed
//    the timers (exec, the dynamic loader, earlier constructors) is part of that run.
// Each is a function of its own in libtally (exported, so that its name survives
// stripping), whose address is the one frame of its stack: every reader that symbolizes
// from the binaries (tally, pprof, google-pprof) shows the name.
#pragma once

#include <cstdint>

namespace tally::runtime {

enum class OwnTime { sampling, writing, start_up };

// An address inside the frame's function.
uintptr_t own_time_frame(OwnTime kind);

// The calling process's CPU time so far (all its threads), in nanoseconds.
uint64_t process_cpu_ns();

}  // namespace tally::runtime
