#include "runtime/stack_table.h"

#include <sys/mman.h>

#include <cstring>

namespace tally::runtime {
namespace {

// An entry's state word: generation (20 bits) | state (2 bits) | count (42 bits). Every
// change of an entry's stack passes through kFilling and bumps the generation, so a
// handler that compared the stack and then succeeds in its compare-and-swap on the word
// knows the stack did not change in between (the word is a sequence lock).
constexpr int kCountBits = 42;
constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;
constexpr int kStateShift = kCountBits;
constexpr int kGenerationShift = kCountBits + 2;
enum : uint64_t { kEmpty = 0, kFilling = 1, kReady = 2 };

uint64_t state_of(uint64_t word) { return (word >> kStateShift) & 3; }
uint64_t count_of(uint64_t word) { return word & kCountMask; }
uint64_t generation_of(uint64_t word) { return word >> kGenerationShift; }
uint64_t make_word(uint64_t generation, uint64_t state, uint64_t count) {
  return (generation << kGenerationShift) | (state << kStateShift) | (count & kCountMask);
}

void* map_zeroed(size_t bytes) {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

// Gives the pages back (they read as zero again) without unmapping: a handler of a
// previous session that is somehow still running must never touch unmapped memory.
void zero(void* memory, size_t bytes) {
  if (madvise(memory, bytes, MADV_DONTNEED) != 0) memset(memory, 0, bytes);
}

}  // namespace

uint64_t hash_stack(const uintptr_t* pcs, int depth) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(depth);
  for (int i = 0; i < depth; ++i) {
    h ^= pcs[i];
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  return h;
}

struct StackTable::Entry {
  std::atomic<uint64_t> word;
  std::atomic<uint64_t> hash;
  std::atomic<int32_t> depth;
  std::atomic<uintptr_t> pcs[kMaxFrames];
};

bool StackTable::reset() {
  constexpr size_t bytes = sizeof(Entry) * kEntries;
  if (entries_ == nullptr) {
    entries_ = static_cast<Entry*>(map_zeroed(bytes));
    if (entries_ == nullptr) return false;
  } else {
    zero(entries_, bytes);
  }
  occupied_.store(0, std::memory_order_relaxed);
  return true;
}

bool StackTable::add(uint64_t hash, const uintptr_t* pcs, int depth, uint64_t count,
                     EntryRef* where) {
  if (entries_ == nullptr) return false;
  for (uint32_t probe = 0; probe < kProbes; ++probe) {
    uint32_t index = static_cast<uint32_t>((hash + probe) & (kEntries - 1));
    Entry& entry = entries_[index];
    auto found = [&](uint64_t generation) {
      if (where != nullptr) *where = EntryRef{index, static_cast<uint32_t>(generation), true};
      return true;
    };
    uint64_t word = entry.word.load(std::memory_order_acquire);
    for (;;) {
      uint64_t state = state_of(word);
      if (state == kReady) {
        bool same = entry.hash.load(std::memory_order_relaxed) == hash &&
                    entry.depth.load(std::memory_order_relaxed) == depth;
        for (int i = 0; same && i < depth; ++i) {
          same = entry.pcs[i].load(std::memory_order_relaxed) == pcs[i];
        }
        if (!same) break;
        // The stack reads above must be complete before the word is validated.
        std::atomic_thread_fence(std::memory_order_acquire);
        uint64_t generation = generation_of(word);
        // Other handlers adding to the same entry change only the count: retry the swap
        // as long as the entry still holds the stack compared.
        while (state_of(word) == kReady && generation_of(word) == generation &&
               count_of(word) + count <= kCountMask) {
          if (entry.word.compare_exchange_weak(word, word + count, std::memory_order_acq_rel,
                                               std::memory_order_acquire)) {
            return found(generation);
          }
        }
        if (state_of(word) == kReady && generation_of(word) == generation) break;  // count full
        continue;  // the entry changed: look again
      }
      if (state == kEmpty) {
        uint64_t filling = make_word(generation_of(word), kFilling, 0);
        if (!entry.word.compare_exchange_weak(word, filling, std::memory_order_acquire,
                                              std::memory_order_acquire)) {
          continue;
        }
        entry.hash.store(hash, std::memory_order_relaxed);
        entry.depth.store(depth, std::memory_order_relaxed);
        for (int i = 0; i < depth; ++i) entry.pcs[i].store(pcs[i], std::memory_order_relaxed);
        entry.word.store(make_word(generation_of(word), kReady, count), std::memory_order_release);
        occupied_.fetch_add(1, std::memory_order_relaxed);
        return found(generation_of(word));
      }
      break;  // being filled or freed by someone else
    }
  }
  return false;
}

bool StackTable::add_to(const EntryRef& where, uint64_t count) {
  if (entries_ == nullptr || !where.valid || where.index >= kEntries) return false;
  Entry& entry = entries_[where.index];
  uint64_t word = entry.word.load(std::memory_order_acquire);
  // The generation has only 20 bits in the word: compare what the word holds.
  constexpr uint64_t kGenerationMask = (uint64_t{1} << (64 - kGenerationShift)) - 1;
  while (state_of(word) == kReady && generation_of(word) == (where.generation & kGenerationMask) &&
         count_of(word) + count <= kCountMask) {
    if (entry.word.compare_exchange_weak(word, word + count, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
      return true;
    }
  }
  return false;
}

void StackTable::harvest(RecordSink sink, void* context, bool reclaim_idle) {
  if (entries_ == nullptr) return;
  uintptr_t pcs[kMaxFrames];
  for (uint32_t i = 0; i < kEntries; ++i) {
    Entry& entry = entries_[i];
    uint64_t word = entry.word.load(std::memory_order_acquire);
    while (state_of(word) == kReady) {
      uint64_t count = count_of(word);
      if (count == 0) {
        if (!reclaim_idle) break;
        uint64_t filling = make_word(generation_of(word), kFilling, 0);
        if (!entry.word.compare_exchange_weak(word, filling, std::memory_order_acq_rel,
                                              std::memory_order_acquire)) {
          continue;
        }
        entry.word.store(make_word(generation_of(word) + 1, kEmpty, 0),
                         std::memory_order_release);
        occupied_.fetch_sub(1, std::memory_order_relaxed);
        break;
      }
      if (!entry.word.compare_exchange_weak(word, make_word(generation_of(word), kReady, 0),
                                            std::memory_order_acq_rel,
                                            std::memory_order_acquire)) {
        continue;
      }
      // Only this thread changes a ready entry's stack, so it is stable here.
      int depth = entry.depth.load(std::memory_order_relaxed);
      for (int k = 0; k < depth; ++k) pcs[k] = entry.pcs[k].load(std::memory_order_relaxed);
      sink(context, count, pcs, depth);
      break;
    }
  }
}

struct EvictionQueue::Slot {
  std::atomic<uint64_t> sequence;
  uint64_t count;
  int32_t depth;
  uintptr_t pcs[kMaxFrames];
};

bool EvictionQueue::reset() {
  constexpr size_t bytes = sizeof(Slot) * kSlots;
  if (slots_ == nullptr) {
    slots_ = static_cast<Slot*>(map_zeroed(bytes));
    if (slots_ == nullptr) return false;
  } else {
    zero(slots_, bytes);
  }
  for (uint64_t i = 0; i < kSlots; ++i) slots_[i].sequence.store(i, std::memory_order_relaxed);
  enqueue_position_.store(0, std::memory_order_relaxed);
  dequeue_position_.store(0, std::memory_order_release);
  return true;
}

bool EvictionQueue::push(uint64_t count, const uintptr_t* pcs, int depth) {
  if (slots_ == nullptr) return false;
  uint64_t position = enqueue_position_.load(std::memory_order_relaxed);
  Slot* slot;
  for (;;) {
    slot = &slots_[position & (kSlots - 1)];
    uint64_t sequence = slot->sequence.load(std::memory_order_acquire);
    auto difference = static_cast<int64_t>(sequence - position);
    if (difference == 0) {
      if (enqueue_position_.compare_exchange_weak(position, position + 1,
                                                  std::memory_order_relaxed)) {
        break;
      }
    } else if (difference < 0) {
      return false;  // full
    } else {
      position = enqueue_position_.load(std::memory_order_relaxed);
    }
  }
  slot->count = count;
  slot->depth = depth;
  memcpy(slot->pcs, pcs, sizeof(uintptr_t) * static_cast<size_t>(depth));
  slot->sequence.store(position + 1, std::memory_order_release);
  return true;
}

size_t EvictionQueue::drain(RecordSink sink, void* context) {
  if (slots_ == nullptr) return 0;
  size_t drained = 0;
  uint64_t position = dequeue_position_.load(std::memory_order_relaxed);
  for (;;) {
    Slot* slot = &slots_[position & (kSlots - 1)];
    if (slot->sequence.load(std::memory_order_acquire) != position + 1) break;
    sink(context, slot->count, slot->pcs, slot->depth);
    slot->sequence.store(position + kSlots, std::memory_order_release);
    ++position;
    ++drained;
  }
  dequeue_position_.store(position, std::memory_order_release);
  return drained;
}

uint64_t EvictionQueue::approximate_size() const {
  return enqueue_position_.load(std::memory_order_relaxed) -
         dequeue_position_.load(std::memory_order_relaxed);
}

}  // namespace tally::runtime
