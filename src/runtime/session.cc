#include "runtime/session.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

#include "runtime/environment.h"
#include "runtime/maps_snapshot.h"
#include "runtime/own_time.h"
#include "runtime/profile_file.h"
#include "runtime/sampler.h"
#include "runtime/stack_table.h"
#include "runtime/text.h"
#include "runtime/thread_hooks.h"
#include "runtime/thread_registry.h"
#include "runtime/unwind_index.h"
#include "runtime/stderr_print.h"

namespace tally::runtime {
namespace {

constexpr long kServiceIntervalNs = 100'000'000;

// The session's state, gathered as gperftools' CpuProfiler keeps its own: the locks, the
// session (its sample store, file and counters), the service thread and the toggle.
struct Locks {
  pthread_mutex_t control = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
  pthread_once_t initialized = PTHREAD_ONCE_INIT;
  pthread_key_t thread_key{};
};
constinit Locks locks;

struct Session {
  bool active = false;
  bool from_environment = false;
  bool unwinding_with_cfi = false;
  time_t start_time = 0;
  uint64_t period_us = 0;
  char path[PATH_MAX] = {};
  // The base of a forked child's PATH.PID: $CPUPROFILE as the user gave it.
  char environment_base[PATH_MAX] = {};
  // What the handlers record into, and the file the service thread moves it to.
  StackTable table;
  EvictionQueue queue;
  MapsSnapshot maps;
  ProfileFile file;
  // Counters of threads that ended during the session.
  uint64_t ended_interrupts = 0;
  uint64_t ended_units = 0;
  uint64_t ended_evictions = 0;
  uint64_t ended_dropped = 0;
  uint64_t ended_sampling_ns = 0;
  uint64_t ended_stacks_cut[kStackCutKinds] = {};
  // For the frames of own_time.h: the CPU time before profiling began (a whole-run
  // profile only), and the service thread's clock when the session began.
  uint64_t start_up_ns = 0;
  uint64_t writer_ns_at_start = 0;
};
constinit Session session;

struct ServiceThread {
  sem_t wake{};
  sem_t ready{};
  bool started = false;
  bool deferred = false;
  std::atomic<int> tid{0};
  pthread_t thread{};
};
constinit ServiceThread service;

// CPUPROFILESIGNAL: requests counted by the signal handler, carried out by the service thread.
struct Toggle {
  std::atomic<uint64_t> requests{0};
  uint64_t done = 0;
  bool enabled = false;
  unsigned count = 0;
  char base[PATH_MAX] = {};
};
constinit Toggle toggle;

struct Lock {
  explicit Lock(pthread_mutex_t& m) : mutex(m) { pthread_mutex_lock(&mutex); }
  ~Lock() { release(); }
  void release() {
    if (held) pthread_mutex_unlock(&mutex);
    held = false;
  }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
  pthread_mutex_t& mutex;
  bool held = true;
};

// Outside the locks: the pprof conversion starts threads of its own, which must neither
// wait for the control lock nor be sampled.
void publish(ProfileFile::Completed& completed) {
  InternalThreads internal;
  completed.publish();
}

void append_record(void* context, uint64_t count, const uintptr_t* pcs, int depth) {
  static_cast<ProfileFile*>(context)->append(count, pcs, depth);
}

// Writer lock held: everything the handlers recorded so far goes to the file.
void move_samples_to_file(bool everything) {
  session.queue.drain(append_record, &session.file);
  if (everything) {
    session.table.harvest(append_record, &session.file, false);
    session.queue.drain(append_record, &session.file);
  } else if (session.table.occupied() > StackTable::kEntries / 2) {
    session.table.harvest(append_record, &session.file, true);
  }
}

void add_ended_counters(const ThreadSlot& slot) {
  session.ended_interrupts += slot.interrupts.load(std::memory_order_relaxed);
  session.ended_units += slot.units.load(std::memory_order_relaxed);
  session.ended_evictions += slot.evictions.load(std::memory_order_relaxed);
  session.ended_dropped += slot.dropped.load(std::memory_order_relaxed);
  session.ended_sampling_ns += slot.sampling_ns.load(std::memory_order_relaxed);
  for (int i = 0; i < kStackCutKinds; ++i)
    session.ended_stacks_cut[i] += slot.stacks_cut[i].load(std::memory_order_relaxed);
}

struct Totals {
  uint64_t interrupts = 0;
  uint64_t units = 0;
  uint64_t evictions = 0;
  uint64_t dropped = 0;
  uint64_t sampling_ns = 0;
  uint64_t stacks_cut[kStackCutKinds] = {};
};

// "N of M samples (REASON: n, ...)"; returns N.
uint64_t describe_stacks_cut(const Totals& totals, char* text, size_t size) {
  uint64_t cut = 0;
  for (uint64_t count : totals.stacks_cut) cut += count;
  size_t used = 0;
  auto add = [&](int written) {
    if (written > 0) used = used + static_cast<size_t>(written) < size ? used + static_cast<size_t>(written) : size - 1;
  };
  add(snprintf(text, size, "%llu of %llu samples", static_cast<unsigned long long>(cut),
               static_cast<unsigned long long>(totals.interrupts)));
  if (cut == 0) return 0;
  add(snprintf(text + used, size - used, " ("));
  bool first = true;
  for (int i = 1; i < kStackCutKinds; ++i) {
    if (totals.stacks_cut[i] == 0) continue;
    add(snprintf(text + used, size - used, "%s%s: %llu", first ? "" : ", ",
                 stack_cut_name(static_cast<StackCut>(i)), static_cast<unsigned long long>(totals.stacks_cut[i])));
    first = false;
  }
  add(snprintf(text + used, size - used, ")"));
  return cut;
}

Totals session_totals() {
  Totals totals{session.ended_interrupts, session.ended_units, session.ended_evictions,
                session.ended_dropped, session.ended_sampling_ns, {}};
  for (int i = 0; i < kStackCutKinds; ++i) totals.stacks_cut[i] = session.ended_stacks_cut[i];
  for (size_t i = 0, limit = slot_limit(); i < limit; ++i) {
    const ThreadSlot& slot = slot_at(i);
    if (slot.tid.load(std::memory_order_relaxed) == 0) continue;
    totals.interrupts += slot.interrupts.load(std::memory_order_relaxed);
    totals.units += slot.units.load(std::memory_order_relaxed);
    totals.evictions += slot.evictions.load(std::memory_order_relaxed);
    totals.dropped += slot.dropped.load(std::memory_order_relaxed);
    totals.sampling_ns += slot.sampling_ns.load(std::memory_order_relaxed);
    for (int k = 0; k < kStackCutKinds; ++k) totals.stacks_cut[k] += slot.stacks_cut[k].load(std::memory_order_relaxed);
  }
  return totals;
}

void reset_counters() {
  session.ended_interrupts = session.ended_units = 0;
  session.ended_evictions = session.ended_dropped = session.ended_sampling_ns = 0;
  for (auto& cut : session.ended_stacks_cut) cut = 0;
  for (size_t i = 0, limit = slot_limit(); i < limit; ++i) {
    ThreadSlot& slot = slot_at(i);
    slot.interrupts.store(0, std::memory_order_relaxed);
    slot.units.store(0, std::memory_order_relaxed);
    slot.evictions.store(0, std::memory_order_relaxed);
    slot.dropped.store(0, std::memory_order_relaxed);
    slot.sampling_ns.store(0, std::memory_order_relaxed);
    for (auto& cut : slot.stacks_cut) cut.store(0, std::memory_order_relaxed);
  }
}

// The service thread's CPU time so far (0 before it exists).
uint64_t writer_cpu_ns() {
  clockid_t clock;
  timespec now{};
  if (!service.started || pthread_getcpuclockid(service.thread, &clock) != 0 ||
      clock_gettime(clock, &now) != 0) {
    return 0;
  }
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(now.tv_nsec);
}

// Writer lock held, sampling ended: the frames of own_time.h, each a record of its own.
void append_own_time(const Totals& totals, uint64_t period_ns) {
  uint64_t writer_ns = writer_cpu_ns();
  writer_ns = writer_ns > session.writer_ns_at_start ? writer_ns - session.writer_ns_at_start : 0;
  const struct {
    OwnTime kind;
    uint64_t ns;
  } parts[] = {{OwnTime::sampling, totals.sampling_ns},
               {OwnTime::writing, writer_ns},
               {OwnTime::start_up, session.start_up_ns}};
  for (const auto& part : parts) {
    uint64_t periods = (part.ns + period_ns / 2) / period_ns;
    uintptr_t frame = own_time_frame(part.kind);
    if (periods > 0) session.file.append(periods, &frame, 1);
  }
}

// Control lock held. Threads that libtally did not see start (they existed before it was
// loaded, or were made without pthread_create) get a slot; slots of such threads that have
// ended are freed.
void adopt_unseen_threads() {
  static int listed[kMaxThreads];
  size_t count = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return;
  while (dirent* entry = readdir(tasks)) {
    int tid = atoi(entry->d_name);
    if (tid > 0 && count < kMaxThreads) listed[count++] = tid;
  }
  closedir(tasks);
  for (size_t i = 0, limit = slot_limit(); i < limit; ++i) {
    ThreadSlot& slot = slot_at(i);
    int tid = slot.tid.load(std::memory_order_relaxed);
    if (tid == 0 || slot.started_here) continue;
    bool alive = false;
    for (size_t k = 0; k < count && !alive; ++k) alive = listed[k] == tid;
    if (!alive) {
      disarm(slot);
      release_slot(&slot);
    }
  }
  int service_tid = service.tid.load(std::memory_order_acquire);
  for (size_t k = 0; k < count; ++k) {
    if (listed[k] != service_tid) register_other_thread(listed[k]);
  }
}

void run_toggles() {
  uint64_t requested = toggle.requests.load(std::memory_order_acquire);
  while (toggle.done < requested) {
    ++toggle.done;
    bool active;
    {
      Lock control(locks.control);
      active = session.active;
    }
    if (active) {
      stop_profiling();
    } else {
      char path[PATH_MAX + 16];
      snprintf(path, sizeof path, "%s.%u", toggle.base, toggle.count++);
      start_profiling(path, StartOptions{});
    }
  }
}

void* service_main(void*) {
  // Signals are for the program's threads (and each sampled thread gets its own).
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  service.tid.store(gettid(), std::memory_order_release);
  sem_post(&service.ready);
  for (;;) {
    timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += kServiceIntervalNs;
    if (deadline.tv_nsec >= 1'000'000'000) {
      deadline.tv_nsec -= 1'000'000'000;
      ++deadline.tv_sec;
    }
    // Woken early when the eviction queue fills up.
    sem_timedwait(&service.wake, &deadline);
    if (toggle.enabled) run_toggles();
    // Images loaded or unloaded other than through dlopen/dlclose (dl_hooks.cc): the
    // loader's counts tell.
    if (sampling() && session.unwinding_with_cfi) refresh_unwind_index(false);
    Lock writer(locks.writer);
    if (session.file.is_open()) {
      move_samples_to_file(false);
      session.file.flush_buffer();
    }
  }
  return nullptr;
}

// Control lock held.
void start_service_thread() {
  if (service.started) return;
  pthread_t thread;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attributes, 256 * 1024);
  // Through the real pthread_create: the service thread is not a thread to sample.
  service.started = create_unsampled_thread(&thread, &attributes, service_main, nullptr) == 0;
  if (service.started) service.thread = thread;
  pthread_attr_destroy(&attributes);
  if (!service.started) {
    print_to_stderr("tally: cannot start the profile writer thread\n");
    return;
  }
  // Its id, so that adopt_unseen_threads leaves it out.
  while (sem_wait(&service.ready) != 0 && errno == EINTR) {
  }
}

void on_thread_exit(void* value) {
  auto* slot = static_cast<ThreadSlot*>(value);
  Lock control(locks.control);
  if (slot->tid.load(std::memory_order_relaxed) != gettid()) return;
  disarm(*slot);
  add_ended_counters(*slot);
  release_slot(slot);
}

// Control lock held.
ThreadSlot* register_calling_thread() {
  ThreadSlot* slot = current_slot();
  if (slot == nullptr) {
    // A slot left with this id by a thread that ended unseen (the id was reused): free
    // it, or this thread would be sampled twice.
    if (ThreadSlot* stale = find_slot(gettid())) {
      disarm(*stale);
      add_ended_counters(*stale);
      release_slot(stale);
    }
    slot = register_current_thread(true);
    if (slot == nullptr) return nullptr;
  }
  slot->started_here = true;
  pthread_setspecific(locks.thread_key, slot);
  return slot;
}

void before_fork() {
  pthread_mutex_lock(&locks.control);
  pthread_mutex_lock(&locks.writer);
  lock_index_for_fork();
}

void after_fork_in_parent() {
  unlock_index_after_fork_in_parent();
  pthread_mutex_unlock(&locks.writer);
  pthread_mutex_unlock(&locks.control);
}

// The child has one thread, a copy of the parent's samples and descriptors of the parent's
// timers and file: all dropped, never written. Profiling from $CPUPROFILE goes on in
// PATH.PID; the toggle signal starts PATH.PID.N files.
void after_fork_in_child() {
  locks.control = PTHREAD_MUTEX_INITIALIZER;
  locks.writer = PTHREAD_MUTEX_INITIALIZER;
  reset_index_after_fork_in_child();
  bool continue_profiling = session.active && session.from_environment;
  service.deferred = false;
  close_inherited_timers_after_fork();
  keep_only_current_thread_after_fork();
  session.file.abandon();
  session.active = false;
  service.started = false;
  service.tid.store(0, std::memory_order_relaxed);
  sem_init(&service.wake, 0, 0);
  sem_init(&service.ready, 0, 0);
  if (toggle.enabled) {
    snprintf(toggle.base, sizeof toggle.base, "%.*s.%d", PATH_MAX - 16, session.environment_base, getpid());
    toggle.count = 0;
    toggle.done = toggle.requests.load(std::memory_order_relaxed);
    Lock control(locks.control);
    start_service_thread();
  }
  if (continue_profiling) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s.%d", session.environment_base, getpid());
    StartOptions options;
    options.from_environment = true;
    options.defer_writer = true;
    options.after_fork = true;
    start_profiling(path, options);
  }
}

void initialize_once() {
  sem_init(&service.wake, 0, 0);
  sem_init(&service.ready, 0, 0);
  pthread_key_create(&locks.thread_key, on_thread_exit);
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
  Lock control(locks.control);
  register_calling_thread();
}

}  // namespace

void ensure_initialized() { pthread_once(&locks.initialized, initialize_once); }

bool start_profiling(const char* path, const StartOptions& options) {
  ensure_initialized();
  if (path == nullptr || *path == '\0') return false;
  Lock control(locks.control);
  if (session.active) return false;

  SamplingEnvironment environment = sampling_environment();
  int frequency = environment.frequency;
  SamplerSettings settings;
  settings.period_ns = static_cast<uint64_t>(1'000'000 / frequency) * 1000;
  settings.clock = environment.realtime ? SampleClock::wall : SampleClock::cpu;
  settings.mechanism = environment.per_thread_timers ? Mechanism::posix_timer : Mechanism::perf_event;
  settings.unwinder = environment.unwinder;
  settings.signal = choose_sample_signal();
  settings.filter = options.filter;
  settings.filter_arg = options.filter_arg;
  if (settings.signal < 0) {
    print_to_stderr("tally: no free real-time signal to sample with (set CPUPROFILE_TIMER_SIGNAL)\n");
    return false;
  }
  {
    Lock writer(locks.writer);
    if (!session.table.reset() || !session.queue.reset()) {
      print_to_stderr("tally: cannot map the sample session.table\n");
      return false;
    }
    session.maps.capture();
    // A forked child keeps its parent's index: no dl_iterate_phdr in the child before the
    // program itself calls the loader (another thread may have held its lock at the fork).
    bool index_ready = options.after_fork && have_unwind_index();
    if (settings.unwinder == Unwinder::cfi && !index_ready && !refresh_unwind_index(false)) {
      print_to_stderr("tally: cannot map the unwind rules; walking frame pointers\n");
      settings.unwinder = Unwinder::frame_pointers;
    }
    session.unwinding_with_cfi = settings.unwinder == Unwinder::cfi;
    if (!session.file.open(path, settings.period_ns / 1000)) {
      print_to_stderr("tally: cannot write the profile %s: %s\n", path, strerror(errno));
      return false;
    }
  }
  session.from_environment = options.from_environment;
  // A whole-run profile: what the process used before this point is part of the run.
  session.start_up_ns = options.from_environment ? process_cpu_ns() : 0;
  session.start_time = time(nullptr);
  session.period_us = settings.period_ns / 1000;
  copy_text(session.path, sizeof session.path, path);
  reset_counters();
  set_walk_pid(getpid());
  service.deferred = options.defer_writer && !service.started;
  if (!service.deferred) start_service_thread();
  session.writer_ns_at_start = writer_cpu_ns();
  register_calling_thread();
  // A forked child has this one thread, and must not allocate here: an ASan-built
  // program's allocator is still locked while fork handlers run (opendir mallocs).
  if (!options.after_fork) adopt_unseen_threads();

  SampleSinks sinks{&session.table, &session.queue, &session.maps, &service.wake};
  if (!begin_sampling(settings, sinks)) {
    print_to_stderr("tally: cannot handle signal %d\n", settings.signal);
    Lock writer(locks.writer);
    session.file.abandon();
    return false;
  }
  for (size_t i = 0, limit = slot_limit(); i < limit; ++i) {
    ThreadSlot& slot = slot_at(i);
    if (slot.tid.load(std::memory_order_relaxed) != 0) arm(slot);
  }
  session.active = true;
  return true;
}

void stop_profiling() {
  Lock control(locks.control);
  if (!session.active) return;
  end_sampling();
  for (size_t i = 0, limit = slot_limit(); i < limit; ++i) disarm(slot_at(i));
  Lock writer(locks.writer);
  move_samples_to_file(true);
  Totals totals = session_totals();
  append_own_time(totals, session.period_us * 1000);
  uint64_t records = session.file.records();
  uint64_t bytes = session.file.bytes();
  // With the CFI walk, the profile says how many stacks did not reach their thread's root.
  char stacks_cut[256];
  uint64_t cut = describe_stacks_cut(totals, stacks_cut, sizeof stacks_cut);
  char note[300] = {};
  if (session.unwinding_with_cfi) snprintf(note, sizeof note, "# tally: stacks cut short: %s\n", stacks_cut);
  ProfileFile::Completed completed;
  bool complete = session.file.finish(completed, note);
  session.active = false;
  writer.release();
  control.release();
  if (complete) publish(completed);
  // gperftools' closing line, then what tally adds when something was lost.
  print_to_stderr("PROFILE: interrupts/evictions/bytes = %llu/%llu/%llu\n",
          static_cast<unsigned long long>(totals.interrupts),
          static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes));
  if (cut > 0) print_to_stderr("tally: stacks cut short: %s\n", stacks_cut);
  if (totals.dropped > 0) {
    print_to_stderr("tally: %llu sampling periods dropped (the writer fell behind)\n",
            static_cast<unsigned long long>(totals.dropped));
  }
}

void flush_profiling() {
  Lock control(locks.control);
  if (!session.active) return;
  Lock writer(locks.writer);
  move_samples_to_file(true);
  ProfileFile::Completed completed;
  bool complete = session.file.snapshot(completed);
  writer.release();
  control.release();
  if (complete) publish(completed);
}

SessionState session_state() {
  SessionState state;
  ensure_initialized();
  Lock control(locks.control);
  state.enabled = session.active;
  if (session.active) {
    state.start_time = session.start_time;
    copy_text(state.path, sizeof state.path, session.path);
    state.samples = session_totals().units;
  }
  return state;
}

void register_thread() {
  ensure_initialized();
  Lock control(locks.control);
  ThreadSlot* slot = register_calling_thread();
  if (slot != nullptr && session.active) arm(*slot);
  if (service.deferred && session.active) {
    service.deferred = false;
    start_service_thread();
  }
}

void enable_toggle(const char* base_path) {
  ensure_initialized();
  Lock control(locks.control);
  copy_text(toggle.base, sizeof toggle.base, base_path);
  toggle.enabled = true;
  start_service_thread();
}

void request_toggle() {
  toggle.requests.fetch_add(1, std::memory_order_release);
  sem_post(&service.wake);
}

bool profile_path_from_environment(char* path, size_t size) {
  char* value = getenv("CPUPROFILE");
  if (value == nullptr || *value == '\0') return false;
  if ((value[0] & 0x80) != 0) {
    snprintf(path, size, "%c%s.%d", value[0] & 0x7f, value + 1, getpid());
  } else {
    copy_text(path, size, value);
    value[0] = static_cast<char>(value[0] | 0x80);
  }
  // The base of a forked child's PATH.PID: the name as the user gave it.
  snprintf(session.environment_base, sizeof session.environment_base, "%c%s", value[0] & 0x7f, value + 1);
  return true;
}

}  // namespace tally::runtime
