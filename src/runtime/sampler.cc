#include "runtime/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "runtime/cfi_walk.h"
#include "runtime/unwind_index.h"
#include "runtime/stderr_print.h"

namespace tally::runtime {
namespace {

// The sampler's state, one object (the handler reads settings and sinks, published by
// `running`; the rest is the control lock's).
struct Sampler {
  SamplerSettings settings;
  SampleSinks sinks;
  std::atomic<bool> running{false};
  bool handler_installed[_NSIG] = {};
  bool warned_perf_refused = false;
};
constinit Sampler sampler;

uint64_t read_clock(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(now.tv_nsec);
}

// Our timers: a perf_event overflow (si_code POLL_IN/POLL_HUP) or a POSIX timer. Anything
// else (kill, sigqueue, tgkill by someone) is not a sample.
bool from_our_timer(const siginfo_t* info) { return info->si_code > 0 || info->si_code == SI_TIMER; }

// perf's hrtimer events do not go below 10 us.
constexpr uint64_t kMinInterval = 10'000;

// The time to the next sample: to the end of the current period, then to a uniformly
// random point (xorshift64*) of the next one.
uint64_t next_interval(ThreadSlot& slot) {
  uint64_t x = slot.random_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  slot.random_state = x;
  uint64_t phase = ((x * 0x2545f4914f6cdd1dULL) >> 11) % sampler.settings.period_ns;
  uint64_t interval = sampler.settings.period_ns - slot.phase_ns + phase;
  slot.phase_ns = phase;
  return interval < kMinInterval ? kMinInterval : interval;
}

void seed(ThreadSlot& slot, int tid) {
  slot.random_state = 0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(tid) + 1) ^ slot.last_ns;
  if (slot.random_state == 0) slot.random_state = 1;
  slot.phase_ns = sampler.settings.period_ns;  // the first sample falls inside the first period
}

itimerspec timer_interval(uint64_t first_ns) {
  itimerspec interval;
  interval.it_value.tv_sec = static_cast<time_t>(first_ns / 1'000'000'000ULL);
  interval.it_value.tv_nsec = static_cast<long>(first_ns % 1'000'000'000ULL);
  interval.it_interval.tv_sec = static_cast<time_t>(sampler.settings.period_ns / 1'000'000'000ULL);
  interval.it_interval.tv_nsec = static_cast<long>(sampler.settings.period_ns % 1'000'000'000ULL);
  return interval;
}

void record(ThreadSlot& slot, const void* ucontext, uint64_t units) {
  uintptr_t pcs[kMaxFrames];
  int depth;
  if (sampler.settings.unwinder == Unwinder::cfi) {
    StackCut cut;
    depth = walk_stack_cfi(enter_index_reader(), registers_from_context(ucontext), slot.stack, pcs,
                           kMaxFrames, &cut);
    leave_index_reader();
    if (cut != StackCut::none) slot.stacks_cut[static_cast<int>(cut)].fetch_add(1, std::memory_order_relaxed);
    // Code loaded since the index was built (dlopen): the service thread rebuilds it.
    if (cut == StackCut::no_unwind_info && note_unknown_code()) sem_post(sampler.sinks.wake_service);
  } else {
    depth = walk_stack(registers_from_context(ucontext), slot.stack, sampler.sinks.maps, true, pcs, kMaxFrames);
  }
  uint64_t hash = hash_stack(pcs, depth);
  slot.last_entry.valid = false;
  if (sampler.sinks.table->add(hash, pcs, depth, units, &slot.last_entry)) {
    // counted below
  } else if (sampler.sinks.queue->push(units, pcs, depth)) {
    slot.evictions.fetch_add(1, std::memory_order_relaxed);
    if (sampler.sinks.queue->approximate_size() >= EvictionQueue::kSlots / 2) sem_post(sampler.sinks.wake_service);
  } else {
    slot.dropped.fetch_add(units, std::memory_order_relaxed);
    return;
  }
  slot.units.fetch_add(units, std::memory_order_relaxed);
}

// Of the thread's CPU time since its previous sample, what the sampling itself cost. The
// perf_event counter was set to overflow after `interval_ns` of the thread's time; every
// nanosecond beyond that went to the timer interrupt (which in a virtual machine means
// an exit to the hypervisor: 20-25 us here), the signal's delivery and the handler's
// own work. That goes to [tally: sampling] instead of the interrupted code. Where the
// counter also counts time the thread's clock does not (steal time, IRQ time) the clock
// can be the shorter: then nothing is taken. A signal the thread kept blocked arrives
// late after work of its own: no sample is taken to cost more than kMaxSampleCost. With
// POSIX timers, which fire on the kernel tick, nothing tells the cost apart and it stays
// with the samples.
constexpr uint64_t kMaxSampleCost = 250'000;

uint64_t sampling_cost(ThreadSlot& slot, uint64_t since_last) {
  if (!slot.has_perf_event || sampler.settings.clock != SampleClock::cpu) return 0;
  if (since_last <= slot.interval_ns) return 0;
  uint64_t cost = since_last - slot.interval_ns;
  if (cost > kMaxSampleCost) cost = kMaxSampleCost;
  slot.sampling_ns.fetch_add(cost, std::memory_order_relaxed);
  return cost;
}

void on_sample_signal(int, siginfo_t* info, void* ucontext) {
  int saved_errno = errno;
  ThreadSlot* slot = from_our_timer(info) ? current_slot() : nullptr;
  if (slot != nullptr) {
    // Announce the handler before checking `sampler.running`; end_sampling clears `sampler.running` before
    // looking at the announcements (both sequentially consistent): one of them sees the other.
    slot->in_handler.store(true, std::memory_order_seq_cst);
    if (sampler.running.load(std::memory_order_seq_cst) && slot->armed.load(std::memory_order_acquire)) {
      uint64_t now = read_clock(sampler.settings.clock == SampleClock::cpu ? CLOCK_THREAD_CPUTIME_ID
                                                                   : CLOCK_MONOTONIC);
      uint64_t since_last = now >= slot->last_ns ? now - slot->last_ns : 0;
      slot->last_ns = now;
      uint64_t cost = sampling_cost(*slot, since_last);
      uint64_t elapsed = since_last - cost + slot->residual_ns;
      uint64_t units = elapsed / sampler.settings.period_ns;
      slot->residual_ns = elapsed % sampler.settings.period_ns;
      slot->interrupts.fetch_add(1, std::memory_order_relaxed);
      if (units > 0 && (sampler.settings.filter == nullptr || sampler.settings.filter(sampler.settings.filter_arg) != 0)) {
        record(*slot, ucontext, units);
      }
      uint64_t next = next_interval(*slot);
      slot->interval_ns = next;
      if (slot->has_perf_event) {
        ioctl(slot->perf_fd, PERF_EVENT_IOC_PERIOD, &next);
        ioctl(slot->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
      } else if (slot->has_timer) {
        itimerspec interval = timer_interval(next);
        timer_settime(slot->timer, 0, &interval, nullptr);
      }
    }
    slot->in_handler.store(false, std::memory_order_release);
  }
  errno = saved_errno;
}

bool install_handler(int signal) {
  if (signal <= 0 || signal >= _NSIG) return false;
  if (sampler.handler_installed[signal]) return true;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_sample_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  if (sigaction(signal, &action, nullptr) != 0) return false;
  // Never uninstalled: a signal still queued after stopping must not kill the program.
  sampler.handler_installed[signal] = true;
  return true;
}

bool arm_perf_event(ThreadSlot& slot, int tid) {
  perf_event_attr attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.size = sizeof attributes;
  attributes.type = PERF_TYPE_SOFTWARE;
  attributes.config = PERF_COUNT_SW_TASK_CLOCK;
  attributes.sample_period = sampler.settings.period_ns;
  attributes.disabled = 1;
  attributes.wakeup_events = 1;
  int fd = static_cast<int>(
      syscall(SYS_perf_event_open, &attributes, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) return false;
  f_owner_ex owner{F_OWNER_TID, tid};
  uint64_t id = 0;
  if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, sampler.settings.signal) != 0 ||
      fcntl(fd, F_SETOWN_EX, &owner) != 0 || ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
    int error = errno;
    close(fd);
    errno = error;
    return false;
  }
  slot.perf_fd = fd;
  slot.has_perf_event = true;
  slot.perf_id = id;
  slot.last_ns = read_clock(slot.cpu_clock);
  slot.residual_ns = 0;
  seed(slot, tid);
  uint64_t first = next_interval(slot);
  slot.interval_ns = first;
  ioctl(fd, PERF_EVENT_IOC_PERIOD, &first);
  slot.armed.store(true, std::memory_order_release);
  // One overflow, then the event disables itself until the handler refreshes it.
  ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
  return true;
}

bool arm_posix_timer(ThreadSlot& slot, int tid) {
  sigevent event;
  memset(&event, 0, sizeof event);
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = sampler.settings.signal;
  event._sigev_un._tid = tid;
  clockid_t clock = sampler.settings.clock == SampleClock::cpu ? slot.cpu_clock : CLOCK_MONOTONIC;
  timer_t timer;
  if (timer_create(clock, &event, &timer) != 0) return false;
  slot.timer = timer;
  slot.has_timer = true;
  slot.last_ns = read_clock(clock);
  slot.residual_ns = 0;
  seed(slot, tid);
  slot.armed.store(true, std::memory_order_release);
  itimerspec interval = timer_interval(next_interval(slot));
  if (timer_settime(timer, 0, &interval, nullptr) != 0) {
    slot.armed.store(false, std::memory_order_release);
    timer_delete(timer);
    slot.has_timer = false;
    return false;
  }
  return true;
}

// Our descriptor still is our perf event (a program may have closed it and reused the
// number, e.g. when daemonizing).
bool still_ours(const ThreadSlot& slot) {
  uint64_t id = 0;
  return ioctl(slot.perf_fd, PERF_EVENT_IOC_ID, &id) == 0 && id == slot.perf_id;
}

}  // namespace

int choose_sample_signal() {
  if (const char* requested = getenv("CPUPROFILE_TIMER_SIGNAL"); requested != nullptr && *requested) {
    int signal = atoi(requested);
    if (signal > 0 && signal < _NSIG) return signal;
    print_to_stderr("tally: CPUPROFILE_TIMER_SIGNAL=%s is not a signal number; ignored\n", requested);
  }
  for (int signal = SIGRTMIN + 12; signal <= SIGRTMAX; ++signal) {
    if (sampler.handler_installed[signal]) return signal;
    struct sigaction current;
    if (sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) return signal;
  }
  return -1;
}

bool begin_sampling(const SamplerSettings& new_settings, const SampleSinks& new_sinks) {
  if (!install_handler(new_settings.signal)) return false;
  sampler.settings = new_settings;
  sampler.sinks = new_sinks;
  if (sampler.settings.clock == SampleClock::wall) sampler.settings.mechanism = Mechanism::posix_timer;
  sampler.running.store(true, std::memory_order_seq_cst);
  return true;
}

bool arm(ThreadSlot& slot) {
  int tid = slot.tid.load(std::memory_order_relaxed);
  if (tid == 0 || slot.armed.load(std::memory_order_relaxed)) return tid != 0;
  if (sampler.settings.mechanism == Mechanism::perf_event) {
    if (arm_perf_event(slot, tid)) return true;
    int error = errno;
    if (error == ESRCH) return false;  // the thread is gone
    // Not allowed here (perf_event_paranoid, seccomp, no perf support): POSIX timers from now on.
    if (!sampler.warned_perf_refused) {
      sampler.warned_perf_refused = true;
      print_to_stderr("tally: perf_event_open refused (%s); sampling with POSIX CPU timers\n",
              strerror(error));
    }
    sampler.settings.mechanism = Mechanism::posix_timer;
  }
  if (arm_posix_timer(slot, tid)) return true;
  int error = errno;
  if (error != EINVAL && error != ESRCH) {
    print_to_stderr("tally: cannot start a sampling timer for thread %d: %s\n", tid, strerror(error));
  }
  return false;
}

void disarm(ThreadSlot& slot) {
  bool was_armed = slot.armed.exchange(false, std::memory_order_acq_rel);
  // The time since the thread's latest sample (up to a sampling interval; several ticks
  // with POSIX CPU timers) goes to that sample's stack, so that the counts add up to all
  // of the thread's time. (No handler of this thread runs now: it is this thread, or
  // sampling has ended.)
  if (was_armed && slot.last_entry.valid && sampler.sinks.table != nullptr) {
    clockid_t clock = sampler.settings.clock == SampleClock::cpu ? slot.cpu_clock : CLOCK_MONOTONIC;
    timespec now{};
    if (clock_gettime(clock, &now) == 0) {
      uint64_t now_ns = static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ULL +
                        static_cast<uint64_t>(now.tv_nsec);
      uint64_t elapsed = now_ns >= slot.last_ns ? now_ns - slot.last_ns + slot.residual_ns : 0;
      // Rounded to the nearest period: dropping the part of a period, as the samples
      // carry it, would take half a period from every thread's total on average.
      uint64_t units = (elapsed + sampler.settings.period_ns / 2) / sampler.settings.period_ns;
      if (units > 0 && sampler.sinks.table->add_to(slot.last_entry, units)) {
        slot.units.fetch_add(units, std::memory_order_relaxed);
      }
    }
  }
  if (slot.has_perf_event) {
    if (still_ours(slot)) close(slot.perf_fd);
    slot.has_perf_event = false;
  }
  if (slot.has_timer) {
    timer_delete(slot.timer);
    slot.has_timer = false;
  }
}

void end_sampling() {
  sampler.running.store(false, std::memory_order_seq_cst);
  // A handler is a few microseconds; one that is still "in" after a second belongs to a
  // thread stopped from outside (a debugger): it will find `sampler.running` false when it goes on.
  for (size_t i = 0, limit = slot_limit(); i < limit; ++i) {
    ThreadSlot& slot = slot_at(i);
    for (int spins = 0; spins < 1000 && slot.in_handler.load(std::memory_order_seq_cst); ++spins) {
      timespec pause{0, 1'000'000};
      nanosleep(&pause, nullptr);
    }
  }
}

bool sampling() { return sampler.running.load(std::memory_order_acquire); }

Mechanism sampling_mechanism() { return sampler.settings.mechanism; }

bool pause_sampling_for_exec() {
  ThreadSlot* slot = current_slot();
  if (slot == nullptr || !slot->armed.load(std::memory_order_acquire)) return false;
  // A vfork child runs with its parent's thread-local slot: the timer is the parent's, and
  // the child (a new task) has nothing pending.
  if (slot->tid.load(std::memory_order_relaxed) != gettid()) return false;
  int signal = sampler.settings.signal;
  sigset_t sampling_signal, previous;
  sigemptyset(&sampling_signal);
  sigaddset(&sampling_signal, signal);
  pthread_sigmask(SIG_BLOCK, &sampling_signal, &previous);
  if (slot->has_perf_event) {
    ioctl(slot->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
  } else if (slot->has_timer) {
    itimerspec stopped{};
    timer_settime(slot->timer, 0, &stopped, nullptr);
  }
  // Blocked and no longer generated: whatever is queued can be taken off now.
  timespec no_wait{0, 0};
  siginfo_t info;
  while (sigtimedwait(&sampling_signal, &info, &no_wait) == signal) {
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return true;
}

void resume_sampling_after_exec() {
  ThreadSlot* slot = current_slot();
  if (slot == nullptr || !slot->armed.load(std::memory_order_acquire)) return;
  if (slot->has_perf_event) {
    ioctl(slot->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
  } else if (slot->has_timer) {
    itimerspec interval = timer_interval(sampler.settings.period_ns);
    timer_settime(slot->timer, 0, &interval, nullptr);
  }
}

void close_inherited_timers_after_fork() {
  sampler.running.store(false, std::memory_order_seq_cst);
  for (size_t i = 0, limit = slot_limit(); i < limit; ++i) {
    ThreadSlot& slot = slot_at(i);
    slot.armed.store(false, std::memory_order_relaxed);
    if (slot.has_perf_event && still_ours(slot)) close(slot.perf_fd);
    slot.has_perf_event = false;
    slot.has_timer = false;
  }
}

}  // namespace tally::runtime
