// Every thread is profiled without ProfilerRegisterThread: libtally defines pthread_create
// (found before libc's, whether libtally is preloaded or linked), so each new thread runs
// through a trampoline that registers it and starts its timer before its own code runs.
#pragma once

#include <pthread.h>

namespace tally::runtime {

// libc's pthread_create, for threads of libtally's own (not sampled).
int create_unsampled_thread(pthread_t* thread, const pthread_attr_t* attributes,
                            void* (*start)(void*), void* argument);

// While one lives, threads the calling thread creates are libtally's own (those of the
// pprof conversion): not registered, not sampled.
class InternalThreads {
 public:
  InternalThreads();
  ~InternalThreads();
  InternalThreads(const InternalThreads&) = delete;
  InternalThreads& operator=(const InternalThreads&) = delete;
};

}  // namespace tally::runtime
