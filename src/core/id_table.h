// IdTable: a hash set of 32-bit ids whose keys live elsewhere (a string table's text, a
// profile's function fields, a report's node keys). Each slot is 8 bytes, the id and 32
// bits of its key's hash, where std::unordered_map spends a heap node per entry: interning
// a few hundred thousand names then costs one array instead of as many allocations (and
// as many frees at exit). Open addressing with linear probing; the caller gives the hash
// (well mixed in its low 32 bits, which pick the slot) and, for slots whose hash bits
// match, the equality test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace tally::core {

class IdTable {
 public:
  static constexpr uint32_t kAbsent = std::numeric_limits<uint32_t>::max();

  // The id for which same(id) holds among those inserted with this hash, or kAbsent.
  template <class Same>
  uint32_t find(uint64_t hash, Same&& same) const {
    if (slots_.empty()) return kAbsent;
    const auto h = static_cast<uint32_t>(hash);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.id_plus_one == 0) return kAbsent;
      if (s.hash == h && same(s.id_plus_one - 1)) return s.id_plus_one - 1;
    }
  }

  // The same, inserting `id_if_new` (below kAbsent) when there is none; `inserted` tells
  // which happened.
  template <class Same>
  uint32_t find_or_insert(uint64_t hash, Same&& same, uint32_t id_if_new, bool& inserted) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    const auto h = static_cast<uint32_t>(hash);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.id_plus_one == 0) {
        s = {h, id_if_new + 1};
        ++size_;
        inserted = true;
        return id_if_new;
      }
      if (s.hash == h && same(s.id_plus_one - 1)) {
        inserted = false;
        return s.id_plus_one - 1;
      }
    }
  }

  // Room for `count` ids without growing.
  void reserve(size_t count) {
    size_t capacity = 16;
    while (capacity * 3 < count * 4) capacity *= 2;
    if (capacity > slots_.size()) rehash(capacity);
  }
  size_t size() const { return size_; }
  void clear() {
    slots_.clear();
    size_ = 0;
  }

 private:
  struct Slot {
    uint32_t hash = 0;
    uint32_t id_plus_one = 0;  // 0: empty
  };
  void grow() { rehash(slots_.empty() ? 16 : slots_.size() * 2); }
  void rehash(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    const size_t mask = capacity - 1;
    for (const Slot& s : old) {
      if (s.id_plus_one == 0) continue;
      size_t i = s.hash & mask;
      while (slots_[i].id_plus_one != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;  // a power of two in size, at most 3/4 full
  size_t size_ = 0;
};

}  // namespace tally::core
