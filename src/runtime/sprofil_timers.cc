#include "runtime/sprofil_timers.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace tally::runtime {

namespace {

// The timers' signals carry one of these addresses as si_value.
char g_thread_cookie, g_process_cookie;

// Threads with a timer of their own: an open-addressing table keyed by thread id, claimed
// with compare-and-swap (the handler adds the thread it runs on).
constexpr int kSlots = 4096;
struct Slot {
  std::atomic<int> tid{0};    // 0: free
  std::atomic<int> timer{0};  // kernel timer id + 1; 0: none (zero-initialized: in .bss)
};
// Slot::timer while one caller creates the slot's timer: the others leave it alone.
constexpr int kArming = -1;
Slot g_slots[kSlots];
std::atomic<int> g_process_timer{-1};

int current_tid() { return static_cast<int>(syscall(SYS_gettid)); }

// The CPU clock of thread `tid` (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED),
// as glibc's pthread_getcpuclockid encodes it).
clockid_t thread_cpu_clock(int tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
}

// A periodic timer on `clock`, signalling thread `tid` (0: the process). Returns the
// kernel timer id, or -errno.
int create_timer(clockid_t clock, int tid, uint64_t interval_ns) {
  struct sigevent event;
  std::memset(&event, 0, sizeof event);
  event.sigev_signo = SIGPROF;
  if (tid != 0) {
    event.sigev_notify = SIGEV_THREAD_ID;
    event._sigev_un._tid = tid;
    event.sigev_value.sival_ptr = &g_thread_cookie;
  } else {
    event.sigev_notify = SIGEV_SIGNAL;
    event.sigev_value.sival_ptr = &g_process_cookie;
  }
  int timer = -1;
  if (syscall(SYS_timer_create, clock, &event, &timer) != 0) return -errno;
  struct itimerspec every;
  every.it_interval.tv_sec = static_cast<time_t>(interval_ns / 1'000'000'000u);
  every.it_interval.tv_nsec = static_cast<long>(interval_ns % 1'000'000'000u);
  every.it_value = every.it_interval;
  if (syscall(SYS_timer_settime, timer, 0, &every, nullptr) != 0) {
    int error = errno;
    syscall(SYS_timer_delete, timer);
    return -error;
  }
  return timer;
}

// A thread's timer outlives the thread, and never fires again: the kernel then reports
// it disarmed (no value, no interval). Its thread id may be reused by a new thread.
bool timer_alive(int timer) {
  struct itimerspec now;
  if (syscall(SYS_timer_gettime, timer, &now) != 0) return false;
  return now.it_interval.tv_sec != 0 || now.it_interval.tv_nsec != 0 ||
         now.it_value.tv_sec != 0 || now.it_value.tv_nsec != 0;
}

Slot* find_slot(int tid) {
  for (int probe = 0; probe < kSlots; ++probe) {
    Slot& s = g_slots[(static_cast<unsigned>(tid) + static_cast<unsigned>(probe)) % kSlots];
    const int held = s.tid.load(std::memory_order_acquire);
    if (held == tid) return &s;
    if (held == 0) return nullptr;  // slots are never freed while timers run
  }
  return nullptr;
}

Slot* claim_slot(int tid) {
  for (int probe = 0; probe < kSlots; ++probe) {
    Slot& s = g_slots[(static_cast<unsigned>(tid) + static_cast<unsigned>(probe)) % kSlots];
    int expected = 0;
    if (s.tid.compare_exchange_strong(expected, tid)) return &s;
    if (expected == tid) return &s;
  }
  return nullptr;  // full: the thread is counted through process ticks only
}

// Gives thread `tid` a timer on `clock` (its own CPU clock) if its slot's timer is still
// `seen` (0: none; or a dead timer's id + 1, deleted here). The thread arming itself as it
// starts and another thread arming the threads it lists race for the same slot: only
// the caller that swaps `seen` for kArming creates a timer. Two timers on one thread's
// clock would count each of its ticks twice.
void arm_thread(Slot& s, int tid, clockid_t clock, uint64_t interval_ns, int seen) {
  if (!s.timer.compare_exchange_strong(seen, kArming, std::memory_order_acq_rel)) return;
  if (seen > 0) syscall(SYS_timer_delete, seen - 1);
  const int timer = create_timer(clock, tid, interval_ns);
  s.timer.store(timer >= 0 ? timer + 1 : 0, std::memory_order_release);
}

void forget_all() {
  for (Slot& s : g_slots) {
    s.timer.store(0);
    s.tid.store(0);
  }
  g_process_timer.store(-1);
}

// Arms every thread of the process that has no slot yet, listing /proc/self/task with
// raw system calls (the signal handler calls this).
void arm_new_threads(uint64_t interval_ns) {
  const int dir = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) return;
  alignas(8) char buffer[2048];
  for (;;) {
    const long n = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      struct Entry {  // linux_dirent64
        uint64_t inode;
        int64_t offset;
        unsigned short length;
        unsigned char type;
        char name[1];
      };
      const auto* entry = reinterpret_cast<const Entry*>(buffer + at);
      int tid = 0;
      for (const char* c = entry->name; *c >= '0' && *c <= '9'; ++c) tid = tid * 10 + (*c - '0');
      if (tid > 0 && find_slot(tid) == nullptr) {
        if (Slot* s = claim_slot(tid)) arm_thread(*s, tid, thread_cpu_clock(tid), interval_ns, 0);
      }
      at += entry->length;
    }
  }
  syscall(SYS_close, dir);
}

// Process ticks between two listings of the threads: a new thread that no process tick
// lands on still gets its timer after at most this many ticks of the process's CPU time.
constexpr unsigned kTicksPerListing = 16;
std::atomic<unsigned> g_process_ticks{0};

}  // namespace

TickSource tick_source(const siginfo_t* info) {
  if (info == nullptr || info->si_code != SI_TIMER) return TickSource::foreign;
  if (info->si_value.sival_ptr == &g_thread_cookie) return TickSource::thread_timer;
  if (info->si_value.sival_ptr == &g_process_cookie) return TickSource::process_timer;
  return TickSource::foreign;
}

int start_tick_timers(uint64_t interval_ns) {
  if (g_process_timer.load() >= 0) return 0;
  const int process = create_timer(CLOCK_PROCESS_CPUTIME_ID, 0, interval_ns);
  if (process < 0) return -process;
  g_process_timer.store(process);
  arm_new_threads(interval_ns);  // later ones are found by the process timer
  return 0;
}

bool adopt_current_thread(uint64_t interval_ns) {
  if (g_process_ticks.fetch_add(1, std::memory_order_relaxed) % kTicksPerListing == 0)
    arm_new_threads(interval_ns);
  const int tid = current_tid();
  Slot* s = claim_slot(tid);
  if (s == nullptr) return true;  // table full: counted through process ticks only
  const int seen = s->timer.load(std::memory_order_acquire);
  if (seen == kArming) return false;  // being armed by a lister: its timer counts
  if (seen > 0 && timer_alive(seen - 1)) return false;
  arm_thread(*s, tid, CLOCK_THREAD_CPUTIME_ID, interval_ns, seen);
  return true;
}

void stop_tick_timers() {
  const int process = g_process_timer.exchange(-1);
  if (process >= 0) syscall(SYS_timer_delete, process);
  for (Slot& s : g_slots) {
    const int timer = s.timer.exchange(0) - 1;  // no kArming: no handler runs now
    if (timer >= 0) syscall(SYS_timer_delete, timer);
    s.tid.store(0);
  }
}

int restart_tick_timers_in_child(uint64_t interval_ns) {
  forget_all();
  const int process = create_timer(CLOCK_PROCESS_CPUTIME_ID, 0, interval_ns);
  if (process < 0) return -process;
  g_process_timer.store(process);
  const int tid = current_tid();
  if (Slot* s = claim_slot(tid)) arm_thread(*s, tid, CLOCK_THREAD_CPUTIME_ID, interval_ns, 0);
  return 0;
}

}  // namespace tally::runtime
