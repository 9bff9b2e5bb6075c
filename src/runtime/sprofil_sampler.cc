#include "runtime/sprofil_sampler.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "runtime/kernel_tick.h"
#include "runtime/sprofil_timers.h"

namespace tally::runtime {

namespace {

// What the handler reads. The table pointer and the count of handlers inside one are
// sequentially consistent: after replace_sprofil_table() has swapped the pointer and seen
// no reader, no handler can still hold the old table.
std::atomic<const RegionTable*> g_table{nullptr};
std::atomic<int> g_readers{0};
// The SIGPROF action ours replaced. Published whole through one pointer (two slots used in
// turn, written under g_lock before they are published), so that a handler passing a
// signal on never sees half of one.
struct sigaction g_replaced[2];
std::atomic<const struct sigaction*> g_previous{nullptr};

// The deliveries being passed on, by their siginfo address (unique while one is in
// flight): a handler that passes our signal back to us (it was installed over ours and
// then ours over it) is recognised, and the loop ends there.
constexpr int kPassingSlots = 64;
std::atomic<const void*> g_passing[kPassingSlots];

// Set-up state, under g_lock (never taken by the handler).
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
bool g_timers_running = false;
bool g_atfork_done = false;

uint64_t pc_of(void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return uc->uc_mcontext.pc;
#else
#error "sprofil: the pc of a signal context is only known on x86-64 and AArch64"
#endif
}

bool is_handler(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) ? a.sa_sigaction != nullptr
                                   : a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN;
}

// Calls the replaced handler; SIG_DFL and SIG_IGN: the signal is dropped.
void pass_on(int sig, siginfo_t* info, void* context) {
  const struct sigaction* prev = g_previous.load(std::memory_order_acquire);
  if (prev == nullptr || !is_handler(*prev)) return;
  const void* delivery = info != nullptr ? static_cast<const void*>(info) : context;
  int slot = -1;
  for (int i = 0; i < kPassingSlots; ++i) {
    const void* seen = g_passing[i].load(std::memory_order_acquire);
    if (seen == delivery) return;  // it came back to us: every handler has seen it
    if (seen == nullptr && slot < 0) {
      const void* expected = nullptr;
      if (g_passing[i].compare_exchange_strong(expected, delivery)) slot = i;
    }
  }
  if (prev->sa_flags & SA_SIGINFO)
    prev->sa_sigaction(sig, info, context);
  else
    prev->sa_handler(sig);
  if (slot >= 0) g_passing[slot].store(nullptr, std::memory_order_release);
}

// Async-signal-safe: atomics, the table's lookup, and for a process tick on a thread
// without a timer of its own, that timer's creation.
void on_sigprof(int sig, siginfo_t* info, void* context) {
  const TickSource source = tick_source(info);
  if (source == TickSource::foreign) {
    pass_on(sig, info, context);
    return;
  }
  const int saved_errno = errno;  // the system calls below may set it
  g_readers.fetch_add(1);
  if (const RegionTable* table = g_table.load()) {
    if (source == TickSource::thread_timer) {
      // Ticks of this thread the timer could not signal separately (still pending).
      table->count(pc_of(context),
                   1 + static_cast<uint64_t>(info->si_overrun > 0 ? info->si_overrun : 0));
    } else if (adopt_current_thread(sprofil_interval_ns())) {
      table->count(pc_of(context), 1);
    }
  }
  g_readers.fetch_sub(1);
  errno = saved_errno;
}

bool is_ours(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) && a.sa_sigaction == on_sigprof;
}

// Ours on top, whatever was installed since (a handler that passes our signals back to
// us ends the loop in pass_on).
int install_handler() {
  struct sigaction current;
  if (sigaction(SIGPROF, nullptr, &current) != 0) return errno;
  if (is_ours(current)) return 0;
  struct sigaction ours;
  std::memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = on_sigprof;
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  struct sigaction* slot = &g_replaced[g_previous.load() == &g_replaced[0] ? 1 : 0];
  if (sigaction(SIGPROF, &ours, slot) != 0) return errno;
  g_previous.store(slot, std::memory_order_release);  // complete: publish
  return 0;
}

// The replaced action comes back unless it is SIG_DFL: a tick of the deleted timer may
// still be queued (until Linux 6.13 timer_delete() leaves it pending), and SIGPROF's
// default action would terminate the program. Ours stays then, dropping such signals.
void uninstall_handler() {
  const struct sigaction* prev = g_previous.load();
  if (prev == nullptr) return;
  const bool is_default = !(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_DFL;
  struct sigaction current;
  if (!is_default && sigaction(SIGPROF, nullptr, &current) == 0 && is_ours(current))
    sigaction(SIGPROF, prev, nullptr);
}

void wait_for_readers() {
  while (g_readers.load() != 0) sched_yield();
}

// sprofil(2): "Profiling ... remains on in both child and parent processes after a fork()".
// Timers are not inherited: the child arms its own (it counts into its copy of the
// counters). No handler runs in the child yet, so the reader count starts again at zero.
void before_fork() { pthread_mutex_lock(&g_lock); }
void after_fork_in_parent() { pthread_mutex_unlock(&g_lock); }
void after_fork_in_child() {
  g_readers.store(0);
  if (g_table.load() != nullptr &&
      restart_tick_timers_in_child(sprofil_interval_ns()) != 0) {
    g_table.store(nullptr);
    g_timers_running = false;
  }
  pthread_mutex_unlock(&g_lock);
}

}  // namespace

uint64_t sprofil_interval_ns() {
  // Cached without a guarded static (libtally has no thread-safe statics): racing callers
  // store the same value.
  static std::atomic<uint64_t> tick{0};
  uint64_t ns = tick.load(std::memory_order_relaxed);
  if (ns == 0) tick.store(ns = kernel_tick_ns(), std::memory_order_relaxed);
  return ns;
}

void sprofil_thread_started() {
  g_readers.fetch_add(1);  // stopping waits for this before it deletes the timers
  if (g_table.load() != nullptr) adopt_current_thread(sprofil_interval_ns());
  g_readers.fetch_sub(1);
}

int replace_sprofil_table(RegionTablePtr table) {
  pthread_mutex_lock(&g_lock);
  int error = 0;
  if (!g_atfork_done) {
    error = pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    g_atfork_done = error == 0;
  }
  if (error == 0 && table != nullptr) {
    error = install_handler();
    if (error == 0 && !g_timers_running) {
      error = start_tick_timers(sprofil_interval_ns());
      g_timers_running = error == 0;
    }
  }
  if (error != 0) {
    pthread_mutex_unlock(&g_lock);
    return error;
  }
  const RegionTable* old = g_table.exchange(table.release());
  const bool stopping = g_table.load() == nullptr;
  // After this, no handler holds the old table, and when stopping none can arm a timer.
  wait_for_readers();
  if (stopping && g_timers_running) {
    stop_tick_timers();
    g_timers_running = false;
  }
  if (stopping) uninstall_handler();
  RegionTableDeleter()(const_cast<RegionTable*>(old));
  pthread_mutex_unlock(&g_lock);
  return 0;
}

}  // namespace tally::runtime
