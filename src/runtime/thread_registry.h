// Every thread libtally knows, in fixed storage: its stack bounds, CPU clock, the timer
// that samples it, and its counters. A thread finds its own slot from its signal handler
// through an initial-exec TLS pointer (no allocation, no lock); threads that libtally did
// not see start are looked up by thread id.
#pragma once

#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/stack_cut.h"
#include "runtime/stack_table.h"
#include "runtime/stack_walk.h"

namespace tally::runtime {

struct ThreadSlot {
  std::atomic<int> tid{0};  // 0: free
  bool started_here = false;  // its exit is seen (pthread key destructor)
  StackBounds stack;          // unknown (high 0) for threads libtally did not see start
  clockid_t cpu_clock = 0;

  // The sampling timer; changed only under the control lock. The handler reads them
  // after seeing `armed` (acquire).
  // (Zero-initialized members only: the slots live in .bss, not in the library file.)
  bool has_perf_event = false;
  int perf_fd = 0;
  uint64_t perf_id = 0;
  timer_t timer{};
  bool has_timer = false;
  std::atomic<bool> armed{false};
  std::atomic<bool> in_handler{false};

  // The handler's: clock reading at the previous sample, and time not yet worth a whole
  // sampling period. Set by arm() before `armed`.
  uint64_t last_ns = 0;
  uint64_t residual_ns = 0;
  uint64_t interval_ns = 0;  // the perf_event counter's period since the previous sample
  uint64_t random_state = 0;  // where in its period each sample falls
  uint64_t phase_ns = 0;
  EntryRef last_entry;  // the stack of the latest sample: it gets the time left at the end

  // Counters for the session's report (relaxed).
  std::atomic<uint64_t> interrupts{0};
  std::atomic<uint64_t> units{0};
  std::atomic<uint64_t> evictions{0};
  std::atomic<uint64_t> dropped{0};
  // CPU time the samples themselves cost this thread (see own_time.h).
  std::atomic<uint64_t> sampling_ns{0};
  // Samples whose stack the CFI walk cut short, by StackCut.
  std::atomic<uint64_t> stacks_cut[kStackCutKinds] = {};
};

inline constexpr size_t kMaxThreads = 4096;

// The calling thread's slot, or nullptr. Async-signal-safe.
ThreadSlot* current_slot();

// Claims a slot for the calling thread (stack bounds from pthread_getattr_np). Returns the
// existing slot if it has one; nullptr when all slots are taken. A stale slot with the
// same thread id (a thread that ended unseen) must be released first (find_slot).
ThreadSlot* register_current_thread(bool started_here);
// The slot registered for thread `tid` (the calling thread's own TLS aside), or nullptr.
ThreadSlot* find_slot(int tid);
// Claims a slot for another thread of the process (bounds unknown); nullptr if full.
ThreadSlot* register_other_thread(int tid);
// Frees a slot (its timer must be disarmed). Clears the TLS pointer if it is the caller's.
void release_slot(ThreadSlot* slot);

// Slots [0, slot_limit()) may be in use.
size_t slot_limit();
ThreadSlot& slot_at(size_t index);

// In a forked child: only the calling thread survives; its slot gets its new thread id,
// every other slot is freed. Inherited timer descriptors are left to the caller.
void keep_only_current_thread_after_fork();

}  // namespace tally::runtime
