/* tally's in-process CPU profiler: the C API of gperftools' <gperftools/profiler.h>, so a
 * program written for gperftools builds unchanged with this header and links with -ltally.
 *
 * Differences from gperftools (all in the program's favour; see README, "In-process
 * profiler"): every thread is profiled without ProfilerRegisterThread, sample counts are
 * CPU time actually consumed (not timer ticks), and nothing on the signal path allocates,
 * locks or writes files. */
#ifndef TALLY_PROFILER_H_
#define TALLY_PROFILER_H_

#include <time.h> /* time_t */

/* gperftools' export macro, kept so that code which spells it still compiles. */
#ifndef PERFTOOLS_DLL_DECL
#define PERFTOOLS_DLL_DECL __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Options for ProfilerStartWithOptions; zero it (memset) and fill in what you need. */
struct ProfilerOptions {
  /* When not NULL, called in the profiling signal handler of the sampled thread; the
   * sample is kept only if it returns nonzero. It must be async-signal-safe. */
  int (*filter_in_thread)(void *arg);
  void *filter_in_thread_arg;
};

/* Starts profiling into fname (gperftools format, or pprof's profile.proto when the name
 * ends in ".pb.gz"); the file appears, complete, when profiling stops. Returns nonzero on
 * success, 0 if already profiling or the profiler could not start. */
PERFTOOLS_DLL_DECL int ProfilerStart(const char *fname);
/* The same with options; options may be NULL. */
PERFTOOLS_DLL_DECL int ProfilerStartWithOptions(const char *fname,
                                                const struct ProfilerOptions *options);
/* Stops profiling and writes the profile. Profiling can be started again. */
PERFTOOLS_DLL_DECL void ProfilerStop(void);
/* Moves every sample gathered so far out of memory into the (still unfinished) file. */
PERFTOOLS_DLL_DECL void ProfilerFlush(void);

/* Deprecated in gperftools, where they do nothing; the same here. */
PERFTOOLS_DLL_DECL void ProfilerEnable(void);
PERFTOOLS_DLL_DECL void ProfilerDisable(void);

/* Nonzero while profiling: tally always profiles every thread. */
PERFTOOLS_DLL_DECL int ProfilingIsEnabledForAllThreads(void);

/* Accepted for compatibility; threads are registered automatically as they start. */
PERFTOOLS_DLL_DECL void ProfilerRegisterThread(void);

struct ProfilerState {
  int enabled;              /* profiling now? */
  time_t start_time;        /* when it started, if enabled */
  char profile_name[1024];  /* the file being written, or "" */
  int samples_gathered;     /* sampling periods of CPU time recorded so far */
};
PERFTOOLS_DLL_DECL void ProfilerGetCurrentState(struct ProfilerState *state);

/* The current stack, leaf first, into result (at most max_depth entries, skipping the
 * innermost skip_count): of the interrupted code when uc is a signal handler's ucontext_t,
 * else of the caller. Async-signal-safe. Returns the number of entries stored. */
PERFTOOLS_DLL_DECL int ProfilerGetStackTrace(void **result, int max_depth, int skip_count,
                                             const void *uc);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TALLY_PROFILER_H_ */
