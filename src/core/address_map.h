// AddressMap: uint64 key -> uint32 value, open addressing with linear probing. Readers
// use it to give each distinct instruction address one location id; it is several times
// faster than std::unordered_map for tens of millions of lookups.
#pragma once

#include <cstdint>
#include <vector>

#include "core/hash.h"

namespace tally::core {

class AddressMap {
 public:
  AddressMap() { slots_.resize(kInitialCapacity); }

  // Returns the value stored for `key`, inserting `value_if_new` when absent.
  // `inserted` tells which happened.
  uint32_t find_or_insert(uint64_t key, uint32_t value_if_new, bool& inserted) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    Slot* s = probe(key);
    if (s->used) {
      inserted = false;
      return s->value;
    }
    *s = Slot{key, value_if_new, true};
    ++size_;
    inserted = true;
    return value_if_new;
  }
  // Returns 0 when absent (values are 1-based ids by convention).
  uint32_t find(uint64_t key) const {
    const Slot* s = const_cast<AddressMap*>(this)->probe(key);
    return s->used ? s->value : 0;
  }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kInitialCapacity = 1024;
  struct Slot {
    uint64_t key = 0;
    uint32_t value = 0;
    bool used = false;
  };

  Slot* probe(uint64_t key) {
    size_t mask = slots_.size() - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!s.used || s.key == key) return &s;
    }
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.size() * 2);
    for (const Slot& s : old)
      if (s.used) *probe(s.key) = s;
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace tally::core
