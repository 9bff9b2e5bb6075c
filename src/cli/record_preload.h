// `tally record --preload -- CMD`: the command profiles itself with libtally (LD_PRELOAD
// and gperftools' CPUPROFILE variables), for machines where perf_event_open is refused
// (perf_event_paranoid, containers, seccomp). Every thread is sampled on its own CPU
// clock; processes the command starts write their own profiles (PATH.PID), and all of
// them are read back and merged, each sample labelled with its process id.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::cli {

struct PreloadRecordOptions {
  std::vector<std::string> command;
  uint64_t frequency = 999;  // samples per second of each thread's CPU time (1..100000)
  bool wall_clock = false;   // sample wall-clock time instead (CPUPROFILE_REALTIME)
  std::string library;       // libtally.so to preload; empty: find_runtime_library()
};

struct PreloadRecordResult {
  core::Profile profile;  // sample types samples/count and cpu/nanoseconds, "pid" labels
  int processes = 0;      // profiles found (the command and the processes it started)
  int status = 0;         // the command's exit code, or the signal that ended it
  bool signaled = false;
  rusage usage{};         // wait4's: the command's CPU time and its waited-for children's
  double seconds = 0;     // wall-clock time of the run
};

// The libtally.so to preload: $TALLY_RUNTIME_LIBRARY, else the one installed beside this
// tally (../lib, ../lib64, ../lib/<multiarch>, or the build tree's src/runtime).
core::Expected<std::string> find_runtime_library();

// Runs the command to its end and reads back what it wrote. Errors: no libtally, the
// command cannot be started, or it left no profile (e.g. killed before it could write it).
core::Expected<PreloadRecordResult> record_with_preload(const PreloadRecordOptions& options,
                                                        core::Diagnostics& diagnostics);

}  // namespace tally::cli
