#include "runtime/thread_registry.h"

#include <pthread.h>
#include <unistd.h>

namespace tally::runtime {
namespace {

constinit ThreadSlot slots[kMaxThreads];
constinit std::atomic<size_t> high_water{0};

// initial-exec: reading it from a signal handler never allocates (a dynamic TLS model may
// allocate on first access in a dlopen'd library).
__thread ThreadSlot* tls_slot __attribute__((tls_model("initial-exec"))) = nullptr;

ThreadSlot* claim(int tid) {
  for (size_t i = 0; i < kMaxThreads; ++i) {
    int expected = 0;
    if (slots[i].tid.load(std::memory_order_relaxed) == 0 &&
        slots[i].tid.compare_exchange_strong(expected, tid, std::memory_order_acq_rel)) {
      size_t limit = high_water.load(std::memory_order_relaxed);
      while (limit < i + 1 &&
             !high_water.compare_exchange_weak(limit, i + 1, std::memory_order_release)) {
      }
      return &slots[i];
    }
  }
  return nullptr;
}

void clear(ThreadSlot& slot) {
  slot.started_here = false;
  slot.stack = StackBounds{};
  slot.cpu_clock = 0;
  slot.has_perf_event = false;
  slot.perf_fd = 0;
  slot.perf_id = 0;
  slot.has_timer = false;
  slot.armed.store(false, std::memory_order_relaxed);
  slot.in_handler.store(false, std::memory_order_relaxed);
  slot.last_ns = 0;
  slot.residual_ns = 0;
  slot.random_state = 0;
  slot.phase_ns = 0;
  slot.last_entry = EntryRef{};
  slot.interrupts.store(0, std::memory_order_relaxed);
  slot.units.store(0, std::memory_order_relaxed);
  slot.evictions.store(0, std::memory_order_relaxed);
  slot.dropped.store(0, std::memory_order_relaxed);
  for (auto& cut : slot.stacks_cut) cut.store(0, std::memory_order_relaxed);
}

}  // namespace

ThreadSlot* current_slot() {
  if (tls_slot != nullptr) return tls_slot;
  int tid = gettid();
  size_t limit = high_water.load(std::memory_order_acquire);
  for (size_t i = 0; i < limit; ++i) {
    if (slots[i].tid.load(std::memory_order_acquire) == tid) {
      tls_slot = &slots[i];
      return tls_slot;
    }
  }
  return nullptr;
}

ThreadSlot* register_current_thread(bool started_here) {
  if (tls_slot != nullptr) return tls_slot;
  ThreadSlot* slot = claim(gettid());
  if (slot == nullptr) return nullptr;
  clear(*slot);
  slot->started_here = started_here;
  slot->stack = current_thread_stack_bounds();
  if (pthread_getcpuclockid(pthread_self(), &slot->cpu_clock) != 0) {
    slot->cpu_clock = CLOCK_THREAD_CPUTIME_ID;
  }
  tls_slot = slot;
  return slot;
}

ThreadSlot* find_slot(int tid) {
  size_t limit = high_water.load(std::memory_order_acquire);
  for (size_t i = 0; i < limit; ++i) {
    if (slots[i].tid.load(std::memory_order_acquire) == tid) return &slots[i];
  }
  return nullptr;
}

ThreadSlot* register_other_thread(int tid) {
  if (ThreadSlot* existing = find_slot(tid)) return existing;
  ThreadSlot* slot = claim(tid);
  if (slot == nullptr) return nullptr;
  clear(*slot);
  // The kernel's encoding of a thread's CPU clock (what pthread_getcpuclockid computes
  // from the thread id): CPUCLOCK_SCHED, per thread.
  slot->cpu_clock = static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6);
  return slot;
}

void release_slot(ThreadSlot* slot) {
  if (slot == nullptr) return;
  if (tls_slot == slot) tls_slot = nullptr;
  clear(*slot);
  slot->tid.store(0, std::memory_order_release);
}

size_t slot_limit() { return high_water.load(std::memory_order_acquire); }

ThreadSlot& slot_at(size_t index) { return slots[index]; }

void keep_only_current_thread_after_fork() {
  ThreadSlot* mine = tls_slot;
  size_t limit = high_water.load(std::memory_order_relaxed);
  for (size_t i = 0; i < limit; ++i) {
    if (&slots[i] == mine) continue;
    clear(slots[i]);
    slots[i].tid.store(0, std::memory_order_relaxed);
  }
  if (mine != nullptr) {
    mine->tid.store(gettid(), std::memory_order_relaxed);
    mine->has_perf_event = false;
    mine->has_timer = false;
    mine->armed.store(false, std::memory_order_relaxed);
    mine->in_handler.store(false, std::memory_order_relaxed);
    if (pthread_getcpuclockid(pthread_self(), &mine->cpu_clock) != 0) {
      mine->cpu_clock = CLOCK_THREAD_CPUTIME_ID;
    }
  }
}

}  // namespace tally::runtime
