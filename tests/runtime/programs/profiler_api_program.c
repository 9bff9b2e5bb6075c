/* A program written for gperftools' profiler API, in C, built unchanged twice: against
 * gperftools' <gperftools/profiler.h> with -lprofiler, and against tally's drop-in header
 * (-I include/tally) with -ltally. Each mode exercises one part of the API, checks what the
 * API itself reports, prints "ok" and exits 0 (anything else is a failure, explained on
 * stderr); what ends up in the profile file is checked by the test that runs it.
 *
 * usage: profiler_api_program MODE PROFILE
 *   state    ProfilerGetCurrentState / ProfilingIsEnabledForAllThreads around start/stop,
 *            a second ProfilerStart refused, ProfilerEnable/Disable harmless
 *   flush    burn in before_flush_work, ProfilerFlush, copy PROFILE to PROFILE.flushed,
 *            burn in after_flush_work, stop
 *   filter   two threads (kept_work, filtered_work); filter_in_thread keeps the first only
 *   threads  a thread started before ProfilerStart (early_thread_work), one after
 *            (late_thread_work), one that calls ProfilerRegisterThread (registered_work)
 *   fork     burn in parent_work, fork: the child burns in child_work and calls exit(0);
 *            the parent waits, burns again, stops
 *   restart  two sessions in a row into PROFILE.1 (first_work) and PROFILE.2 (second_work)
 *   stack    ProfilerGetStackTrace from nested functions and from a signal handler
 *   exit     start, burn in exit_work, call exit() without ProfilerStop
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <gperftools/profiler.h>

#include "burn_cpu.h"


static int failures;
#define CHECK(condition)                                                          \
  do {                                                                            \
    if (!(condition)) {                                                           \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                                 \
    }                                                                             \
  } while (0)

NOINLINE void main_work(double seconds) { BURN(seconds); }
NOINLINE void before_flush_work(double seconds) { BURN(seconds); }
NOINLINE void after_flush_work(double seconds) { BURN(seconds); }
NOINLINE void kept_work(double seconds) { BURN(seconds); }
NOINLINE void filtered_work(double seconds) { BURN(seconds); }
NOINLINE void early_thread_work(double seconds) { BURN(seconds); }
NOINLINE void late_thread_work(double seconds) { BURN(seconds); }
NOINLINE void registered_work(double seconds) { BURN(seconds); }
NOINLINE void parent_work(double seconds) { BURN(seconds); }
NOINLINE void child_work(double seconds) { BURN(seconds); }
NOINLINE void first_work(double seconds) { BURN(seconds); }
NOINLINE void second_work(double seconds) { BURN(seconds); }
NOINLINE void exit_work(double seconds) { BURN(seconds); }

static int copy_file(const char* from, const char* to) {
  int in = open(from, O_RDONLY);
  if (in < 0) return -1;
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char buffer[65536];
  ssize_t got;
  while ((got = read(in, buffer, sizeof buffer)) > 0) {
    if (write(out, buffer, (size_t)got) != got) got = -1;
  }
  close(in);
  close(out);
  return got < 0 ? -1 : 0;
}

static int mode_state(const char* profile) {
  struct ProfilerState state;
  memset(&state, 0x55, sizeof state);
  ProfilerGetCurrentState(&state);
  CHECK(state.enabled == 0);
  CHECK(state.profile_name[0] == '\0');
  CHECK(ProfilingIsEnabledForAllThreads() == 0);

  time_t before = time(NULL);
  CHECK(ProfilerStart(profile) != 0);
  ProfilerGetCurrentState(&state);
  CHECK(state.enabled != 0);
  CHECK(strcmp(state.profile_name, profile) == 0);
  CHECK(state.start_time >= before && state.start_time <= time(NULL));
  CHECK(ProfilingIsEnabledForAllThreads() != 0);
  CHECK(ProfilerStart(profile) == 0); /* already profiling */

  ProfilerDisable(); /* deprecated no-ops: profiling goes on */
  main_work(0.3);
  ProfilerEnable();
  ProfilerGetCurrentState(&state);
  CHECK(state.enabled != 0);
  CHECK(state.samples_gathered > 0);

  ProfilerStop();
  ProfilerGetCurrentState(&state);
  CHECK(state.enabled == 0);
  CHECK(ProfilingIsEnabledForAllThreads() == 0);
  ProfilerStop(); /* harmless when stopped */
  ProfilerFlush();
  return 0;
}

static int mode_flush(const char* profile) {
  char flushed[4096];
  snprintf(flushed, sizeof flushed, "%s.flushed", profile);
  CHECK(ProfilerStart(profile) != 0);
  before_flush_work(0.3);
  ProfilerFlush();
  CHECK(copy_file(profile, flushed) == 0);
  after_flush_work(0.3);
  ProfilerStop();
  return 0;
}

static __thread int keep_this_thread;
static const char filter_argument[] = "filter argument";
static int filter(void* argument) {
  return argument == (void*)filter_argument && keep_this_thread;
}

static void* kept_thread(void* unused) {
  (void)unused;
  keep_this_thread = 1;
  kept_work(0.3);
  return NULL;
}

static void* filtered_thread(void* unused) {
  (void)unused;
  filtered_work(0.3);
  return NULL;
}

static int mode_filter(const char* profile) {
  struct ProfilerOptions options;
  memset(&options, 0, sizeof options);
  options.filter_in_thread = filter;
  options.filter_in_thread_arg = (void*)filter_argument;
  CHECK(ProfilerStartWithOptions(profile, &options) != 0);
  pthread_t a, b;
  CHECK(pthread_create(&a, NULL, kept_thread, NULL) == 0);
  CHECK(pthread_create(&b, NULL, filtered_thread, NULL) == 0);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  ProfilerStop();
  return 0;
}

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_changed = PTHREAD_COND_INITIALIZER;
static int gate_open;

static void wait_for_gate(void) {
  pthread_mutex_lock(&gate_lock);
  while (!gate_open) pthread_cond_wait(&gate_changed, &gate_lock);
  pthread_mutex_unlock(&gate_lock);
}

static void* early_thread(void* unused) {
  (void)unused;
  wait_for_gate(); /* started before ProfilerStart, burns after it */
  early_thread_work(0.3);
  return NULL;
}

static void* late_thread(void* unused) {
  (void)unused;
  late_thread_work(0.3);
  return NULL;
}

static void* registered_thread(void* unused) {
  (void)unused;
  ProfilerRegisterThread();
  registered_work(0.3);
  return NULL;
}

static int mode_threads(const char* profile) {
  pthread_t early, late, registered;
  CHECK(pthread_create(&early, NULL, early_thread, NULL) == 0);
  CHECK(ProfilerStart(profile) != 0);
  pthread_mutex_lock(&gate_lock);
  gate_open = 1;
  pthread_cond_broadcast(&gate_changed);
  pthread_mutex_unlock(&gate_lock);
  CHECK(pthread_create(&late, NULL, late_thread, NULL) == 0);
  CHECK(pthread_create(&registered, NULL, registered_thread, NULL) == 0);
  pthread_join(early, NULL);
  pthread_join(late, NULL);
  pthread_join(registered, NULL);
  ProfilerStop();
  return 0;
}

static int mode_fork(const char* profile) {
  CHECK(ProfilerStart(profile) != 0);
  parent_work(0.2);
  pid_t child = fork();
  if (child == 0) {
    child_work(0.3);
    exit(0); /* runs exit handlers and destructors, as a careless child would */
  }
  CHECK(child > 0);
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  parent_work(0.2);
  ProfilerStop();
  return 0;
}

static int mode_restart(const char* profile) {
  char first[4096], second[4096];
  snprintf(first, sizeof first, "%s.1", profile);
  snprintf(second, sizeof second, "%s.2", profile);
  CHECK(ProfilerStart(first) != 0);
  first_work(0.2);
  ProfilerStop();
  CHECK(ProfilerStart(second) != 0);
  second_work(0.2);
  ProfilerStop();
  return 0;
}

static void* handler_trace[32];
static int handler_depth;
static void* interrupted_pc;

static void on_signal(int signal, siginfo_t* info, void* context) {
  (void)signal;
  (void)info;
  handler_depth = ProfilerGetStackTrace(handler_trace, 32, 0, context);
#if defined(__x86_64__)
  interrupted_pc = (void*)((ucontext_t*)context)->uc_mcontext.gregs[REG_RIP];
#endif
}

NOINLINE int inner_function(void** trace, int max_depth) {
  int depth = ProfilerGetStackTrace(trace, max_depth, 0, NULL);
  burn_sink += (uint64_t)depth;
  return depth;
}

NOINLINE int outer_function(void** trace, int max_depth) {
  int depth = inner_function(trace, max_depth);
  burn_sink += (uint64_t)depth;
  return depth;
}

NOINLINE void raise_in_here(void) {
  raise(SIGUSR1);
  burn_sink += 1;
}

/* Whether `pc` lies in `function` (its code is far shorter than 4 KiB). */
static int inside(void* pc, void (*function)(void)) {
  uintptr_t start = (uintptr_t)function;
  return (uintptr_t)pc > start && (uintptr_t)pc < start + 4096;
}

static int mode_stack(void) {
  void* trace[32];
  int depth = outer_function(trace, 32);
  CHECK(depth >= 3);
  if (depth >= 3) {
    CHECK(inside(trace[0], (void (*)(void))inner_function));
    CHECK(inside(trace[1], (void (*)(void))outer_function));
    CHECK(inside(trace[2], (void (*)(void))mode_stack));
  }
  int skipped = ProfilerGetStackTrace(trace, 32, 1, NULL);
  CHECK(skipped >= 1 && !inside(trace[0], (void (*)(void))mode_stack));
  CHECK(ProfilerGetStackTrace(trace, 1, 0, NULL) == 1);

  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &action, NULL);
  raise_in_here();
  /* From a handler: the interrupted code's stack, starting at the interrupted pc. */
  CHECK(handler_depth >= 2);
#if defined(__x86_64__)
  CHECK(handler_depth >= 1 && handler_trace[0] == interrupted_pc);
#endif
  int found = 0;
  for (int i = 0; i < handler_depth; ++i) found |= inside(handler_trace[i], (void (*)(void))mode_stack);
  CHECK(found);
  return 0;
}

static int mode_exit(const char* profile) {
  CHECK(ProfilerStart(profile) != 0);
  exit_work(0.3);
  exit(failures == 0 ? 0 : 1);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODE PROFILE\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  const char* profile = argv[2];
  if (strcmp(mode, "state") == 0) mode_state(profile);
  else if (strcmp(mode, "flush") == 0) mode_flush(profile);
  else if (strcmp(mode, "filter") == 0) mode_filter(profile);
  else if (strcmp(mode, "threads") == 0) mode_threads(profile);
  else if (strcmp(mode, "fork") == 0) mode_fork(profile);
  else if (strcmp(mode, "restart") == 0) mode_restart(profile);
  else if (strcmp(mode, "stack") == 0) mode_stack();
  else if (strcmp(mode, "exit") == 0) mode_exit(profile);
  else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (failures != 0) return 1;
  printf("ok\n");
  return 0;
}
