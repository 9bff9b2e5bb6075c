// KeyTable: an open-addressing hash map from a 128-bit key to a 32-bit value, for the
// reader's per-line lookups (position -> location, call edge -> edge). One flat array, no
// allocation per entry; the table doubles at 3/4 full.
#pragma once

#include <cstdint>
#include <vector>

#include "core/hash.h"

namespace tally::callgrind {

struct Key128 {
  uint64_t a = 0;
  uint64_t b = 0;
  bool operator==(const Key128&) const = default;
};

class KeyTable {
 public:
  static constexpr uint32_t kMissing = UINT32_MAX;

  KeyTable() : slots_(1024) {}

  uint32_t find(const Key128& key) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.value == kMissing) return kMissing;
      if (s.key == key) return s.value;
    }
  }

  // `value` must not be kMissing, and the key must not be present yet.
  void insert(const Key128& key, uint32_t value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    place(key, value);
    ++size_;
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    Key128 key;
    uint32_t value = kMissing;
  };
  static uint64_t hash(const Key128& k) { return core::mix64(k.a * 0x9e3779b97f4a7c15ULL ^ k.b); }
  void place(const Key128& key, uint32_t value) {
    const size_t mask = slots_.size() - 1;
    size_t i = hash(key) & mask;
    while (slots_[i].value != kMissing) i = (i + 1) & mask;
    slots_[i] = Slot{key, value};
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.value != kMissing) place(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace tally::callgrind
