// The profiling session: start, stop, flush and state for the C API and the environment,
// the service thread that moves samples from the lock-free table to the file, thread
// start/exit, fork, and the CPUPROFILESIGNAL toggle.
//
// Locks (never taken in a signal handler): the control lock serializes start/stop and the
// arming of threads; the writer lock serializes everything that touches the file and
// takes samples out of the table. Order: control, then writer.
#pragma once

#include <limits.h>
#include <time.h>

#include <cstdint>

namespace tally::runtime {

struct StartOptions {
  int (*filter)(void*) = nullptr;
  void* filter_arg = nullptr;
  // Started from $CPUPROFILE: a forked child goes on profiling into PATH.PID.
  bool from_environment = false;
  // No writer thread until the program starts a thread of its own (a forked child stays
  // single-threaded, as unshare() and friends need): samples stay in the table until then.
  bool defer_writer = false;
  // In a forked child (its parent's state is inherited).
  bool after_fork = false;
};

struct SessionState {
  bool enabled = false;
  time_t start_time = 0;
  char path[PATH_MAX] = {};
  uint64_t samples = 0;  // sampling periods recorded
};

// Registers the calling thread, the pthread key and the fork handlers (once).
void ensure_initialized();

bool start_profiling(const char* path, const StartOptions& options);
void stop_profiling();
void flush_profiling();
SessionState session_state();

// The calling thread: registered and, while profiling, sampled; its exit is seen.
void register_thread();

// CPUPROFILESIGNAL: the signal toggles profiling into BASE.0, BASE.1, ...
void enable_toggle(const char* base_path);
// The toggle signal's handler: async-signal-safe.
void request_toggle();

// $CPUPROFILE after the gperftools rule: the first process to read it uses it as is and
// marks the variable (high bit of its first byte); processes started from it (which see
// the mark) append ".PID". False when it is not set.
bool profile_path_from_environment(char* path, size_t size);

}  // namespace tally::runtime
