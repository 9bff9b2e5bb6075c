// The regions of one sprofil() call, resolved once (at the call, where allocating is fine)
// into sorted, disjoint address segments, each owned by the region that counts the pcs in
// it under sprofil(2)'s overlap rule. The signal handler then finds a pc's counter with one
// binary search, allocates nothing, takes no lock and increments atomically.
// libtally code: malloc only (no operator new, no exceptions).
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <memory>

#include "tally/sprofil.h"

namespace tally::runtime {

// The counter of the bytes `delta` past a region's start: delta * scale / (size * 65536),
// exactly (128-bit product; size * 65536 is 2^shift). A counter holds size * 65536 / scale
// bytes of text, which is the whole of sprofil(2)'s scale semantics.
inline uint64_t counter_index(uint64_t delta, uint64_t scale, unsigned shift) {
  __extension__ typedef unsigned __int128 u128;
  return static_cast<uint64_t>((static_cast<u128>(delta) * scale) >> shift);
}

// One validated entry of the prof array that is a region (not the overflow bin).
struct ProfRegion {
  uint64_t start = 0;     // pr_off
  uint64_t end = 0;       // the first pc past its last counter (exclusive)
  uint64_t scale = 0;     // pr_scale
  uint64_t counters = 0;  // pr_size / counter size
  void* base = nullptr;   // pr_base
  uint32_t entry = 0;     // index in the prof array
};

// A run of addresses whose pcs one region counts.
struct Segment {
  uint64_t start = 0, end = 0;  // [start, end)
  uint32_t region = 0;          // index in RegionTable::region()
};

// Where a pc is counted: the prof entry and the counter in its pr_base.
struct CounterSlot {
  static constexpr int kNone = -1;  // outside every region, and no overflow bin
  int entry = kNone;
  uint64_t index = 0;
  bool operator==(const CounterSlot&) const = default;
};

class RegionTable;
struct RegionTableDeleter {
  void operator()(RegionTable* table) const;
};
using RegionTablePtr = std::unique_ptr<RegionTable, RegionTableDeleter>;

class RegionTable {
 public:
  // sprofil: an entry with pr_off 0 and pr_scale 2 is the overflow bin; profil: a region.
  enum class Entries { sprofil, profil };
  // Validates the entries and flags (sprofil(2)'s rules; README lists them) and builds the
  // table. Returns 0, or the errno value: E2BIG, EINVAL, EFAULT, ENOMEM.
  static int build(const prof* entries, int count, unsigned flags, RegionTablePtr& out,
                   Entries kind = Entries::sprofil);

  unsigned counter_size() const { return counter_size_; }  // 2, 4 or 8 bytes
  unsigned shift() const { return shift_; }                // log2(counter_size * 65536)
  size_t region_count() const { return region_count_; }
  const ProfRegion& region(size_t i) const { return regions_[i]; }
  size_t segment_count() const { return segment_count_; }
  const Segment& segment(size_t i) const { return segments_[i]; }  // by address
  void* overflow_counter() const { return overflow_; }  // nullptr without an overflow bin
  int overflow_entry() const { return overflow_entry_; }

  // The counter that counts `pc`. Async-signal-safe.
  CounterSlot locate(uint64_t pc) const noexcept;
  // Adds `weight` to the counter of `pc`, stopping at the counter's maximum.
  // Async-signal-safe, lock-free, atomic against every other thread counting.
  void count(uint64_t pc, uint64_t weight) const noexcept;

  RegionTable(const RegionTable&) = delete;
  RegionTable& operator=(const RegionTable&) = delete;

 private:
  friend struct RegionTableDeleter;
  RegionTable() = default;
  ~RegionTable();
  // The segment holding pc, or nullptr.
  const Segment* find(uint64_t pc) const noexcept;
  void add(void* base, uint64_t index, uint64_t weight) const noexcept;
  int resolve_overlaps();

  unsigned counter_size_ = 2, shift_ = 17;
  ProfRegion* regions_ = nullptr;
  size_t region_count_ = 0;
  uint64_t* starts_ = nullptr;  // segments_[i].start, contiguous for the search
  Segment* segments_ = nullptr;  // at least one element (empty when segment_count_ is 0)
  size_t segment_count_ = 0;
  mutable std::atomic<size_t> last_hit_{0};  // index of the segment of the last hit
  void* overflow_ = nullptr;
  int overflow_entry_ = CounterSlot::kNone;
};

}  // namespace tally::runtime
