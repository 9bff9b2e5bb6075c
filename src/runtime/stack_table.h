// Where the signal handlers put their samples: a fixed-size, lock-free hash table of stacks
// with a count each (many threads add at once, each from its own signal handler), and a
// bounded lock-free queue of evicted samples for stacks that found no room. Only the service
// thread takes samples out and writes them; the handlers never block, allocate or write.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tally::runtime {

// gperftools' limit on recorded frames.
inline constexpr int kMaxFrames = 254;

// Receives what leaves the table or the queue: one gperftools record.
using RecordSink = void (*)(void* context, uint64_t count, const uintptr_t* pcs, int depth);

uint64_t hash_stack(const uintptr_t* pcs, int depth);

// Where a stack landed in the table, to add to it later (if it still holds that stack).
struct EntryRef {
  uint32_t index = 0;
  uint32_t generation = 0;
  bool valid = false;
};

class StackTable {
 public:
  static constexpr uint32_t kEntries = 4096;  // a power of two
  static constexpr uint32_t kProbes = 8;

  // Maps the storage (once; reused by later sessions) and empties it. Not thread-safe.
  bool reset();
  // Adds `count` to the stack's entry, claiming a free entry if it has none. False when
  // every entry it may use holds another stack. Async-signal-safe, lock-free.
  bool add(uint64_t hash, const uintptr_t* pcs, int depth, uint64_t count,
           EntryRef* where = nullptr);
  // Adds to the entry `where` refers to; false if it now holds another stack (or none).
  bool add_to(const EntryRef& where, uint64_t count);
  // Service thread only: hands out every nonzero count (zeroing it). With reclaim_idle,
  // entries whose count stayed zero since the previous harvest are freed for new stacks.
  void harvest(RecordSink sink, void* context, bool reclaim_idle);
  uint32_t occupied() const { return occupied_.load(std::memory_order_relaxed); }

 private:
  struct Entry;
  Entry* entries_ = nullptr;
  std::atomic<uint32_t> occupied_{0};
};

// Bounded multi-producer single-consumer queue (Vyukov's sequence-numbered ring).
class EvictionQueue {
 public:
  static constexpr uint64_t kSlots = 1024;  // a power of two

  bool reset();
  // False when full. Async-signal-safe, lock-free.
  bool push(uint64_t count, const uintptr_t* pcs, int depth);
  // Service thread only: pops every completed record, in order; returns how many.
  size_t drain(RecordSink sink, void* context);
  uint64_t approximate_size() const;

 private:
  struct Slot;
  Slot* slots_ = nullptr;
  alignas(64) std::atomic<uint64_t> enqueue_position_{0};
  alignas(64) std::atomic<uint64_t> dequeue_position_{0};
};

}  // namespace tally::runtime
