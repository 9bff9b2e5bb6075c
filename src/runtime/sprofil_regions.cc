#include "runtime/sprofil_regions.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace tally::runtime {

namespace {

__extension__ typedef unsigned __int128 u128;

// The counter size the flags ask for (2, 4 or 8), or 0 if the flags are invalid: unknown
// bits, or two counter sizes at once. PROF_FAST is accepted and has no effect (glibc's
// choice too): the kernel tick is the one rate a CPU-time timer delivers.
unsigned counter_size_of(unsigned flags) {
  constexpr unsigned known = unsigned{PROF_UINT} | PROF_UINT64 | unsigned{PROF_FAST};
  if ((flags & ~known) != 0) return 0;
  if ((flags & PROF_UINT) && (flags & PROF_UINT64)) return 0;
  return (flags & PROF_UINT64) ? 8 : (flags & PROF_UINT) ? 4 : 2;
}

// pr_off, whichever spelling (pr_off or pr_offset) the caller wrote.
uint64_t offset_of(const prof& p) {
  size_t off;
  std::memcpy(&off, &p.pr_off, sizeof off);
  return off;
}

bool is_overflow_bin(const prof& p) { return offset_of(p) == 0 && p.pr_scale == 2; }

bool misaligned(const void* base, unsigned size) {
  return reinterpret_cast<uintptr_t>(base) % size != 0;
}

// Validates one region entry (sprofil(2)'s rules) and fills `r`; returns 0 or errno.
int check_region(const prof& p, unsigned size, unsigned shift, ProfRegion& r) {
  // "a pr_size field is zero or greater than (2^46 * pr_scale) / 65536 or is not a
  // multiple of the element size" (pr_scale 0 makes every pr_size too large).
  if (p.pr_size == 0 || p.pr_size % size != 0) return EINVAL;
  if (static_cast<u128>(p.pr_size) > (static_cast<u128>(p.pr_scale) << 30)) return EINVAL;
  // Finer than one counter per byte: undefined in sprofil(2), refused here.
  if (p.pr_scale > (uint64_t{1} << shift)) return EINVAL;
  if (p.pr_base == nullptr) return EFAULT;
  // Counters are incremented atomically, which needs them aligned.
  if (misaligned(p.pr_base, size)) return EINVAL;
  r.start = offset_of(p);
  r.scale = p.pr_scale;
  r.counters = p.pr_size / size;
  r.base = p.pr_base;
  // The first pc whose counter index is >= counters: start + ceil(counters * 2^shift / scale),
  // in 64-bit parts (no 128-bit division: libtally links libc only). The size rule above
  // keeps the span below 2^47 and scale below 2^20.
  const uint64_t whole = r.counters / r.scale, part = r.counters % r.scale;
  const uint64_t span = (whole << shift) + ((part << shift) + r.scale - 1) / r.scale;
  const u128 end = static_cast<u128>(r.start) + span;
  r.end = end > std::numeric_limits<uint64_t>::max() ? std::numeric_limits<uint64_t>::max()
                                                      : static_cast<uint64_t>(end);
  return 0;
}

template <class T>
T* allocate(size_t n) {
  return static_cast<T*>(std::malloc(std::max<size_t>(n, 1) * sizeof(T)));
}

template <class T>
void add_saturating(void* base, uint64_t index, uint64_t weight) noexcept {
  static_assert(std::atomic_ref<T>::is_always_lock_free, "counters must be lock-free");
  constexpr T kMax = std::numeric_limits<T>::max();
  std::atomic_ref<T> counter(static_cast<T*>(base)[index]);
  T seen = counter.load(std::memory_order_relaxed);
  T next;
  do {
    if (seen == kMax) return;
    next = weight >= static_cast<uint64_t>(kMax - seen) ? kMax
                                                        : static_cast<T>(seen + weight);
  } while (!counter.compare_exchange_weak(seen, next, std::memory_order_relaxed));
}

}  // namespace

void RegionTableDeleter::operator()(RegionTable* table) const {
  if (table == nullptr) return;
  table->~RegionTable();
  std::free(table);
}

RegionTable::~RegionTable() {
  std::free(regions_);
  std::free(starts_);
  std::free(segments_);
}

int RegionTable::build(const prof* entries, int count, unsigned flags, RegionTablePtr& out,
                       Entries kind) {
  if (count < 0 || count > TALLY_PROFIL_MAX) return E2BIG;
  const unsigned size = counter_size_of(flags);
  if (size == 0) return EINVAL;
  void* memory = std::malloc(sizeof(RegionTable));
  if (memory == nullptr) return ENOMEM;
  RegionTablePtr table(new (memory) RegionTable);
  table->counter_size_ = size;
  table->shift_ = 16 + static_cast<unsigned>(std::countr_zero(size));
  table->regions_ = allocate<ProfRegion>(static_cast<size_t>(count));
  if (table->regions_ == nullptr) return ENOMEM;
  for (int i = 0; i < count; ++i) {
    const prof& p = entries[i];
    if (kind == Entries::sprofil && is_overflow_bin(p)) {
      // "the overflow descriptor is not last in the list of specified regions or is more
      // than one element long": EINVAL.
      if (i != count - 1 || p.pr_size != size) return EINVAL;
      if (p.pr_base == nullptr) return EFAULT;
      if (misaligned(p.pr_base, size)) return EINVAL;
      table->overflow_ = p.pr_base;
      table->overflow_entry_ = i;
      continue;
    }
    ProfRegion& r = table->regions_[table->region_count_];
    r = ProfRegion{};
    if (int e = check_region(p, size, table->shift_, r)) return e;
    r.entry = static_cast<uint32_t>(i);
    ++table->region_count_;
  }
  if (int e = table->resolve_overlaps()) return e;
  out = std::move(table);
  return 0;
}

// The overlap rule: of the regions holding a pc, the one with the largest start; on a tie
// the first in the array. Sweeps the sorted boundaries with a heap of the regions open
// there (closed ones are dropped when they reach the top): n regions cost n log n, and
// give at most 2n segments.
int RegionTable::resolve_overlaps() {
  const size_t n = region_count_;
  const ProfRegion* regions = regions_;
  struct Scratch {
    uint32_t* by_start;
    uint32_t* open;
    uint64_t* bounds;
    ~Scratch() {
      std::free(by_start);
      std::free(open);
      std::free(bounds);
    }
  } s{allocate<uint32_t>(n), allocate<uint32_t>(n), allocate<uint64_t>(2 * n)};
  segments_ = allocate<Segment>(2 * n);
  starts_ = allocate<uint64_t>(2 * n);
  if (!s.by_start || !s.open || !s.bounds || !segments_ || !starts_) return ENOMEM;
  segments_[0] = Segment{};  // the first hint: an empty range until there is a segment

  for (uint32_t i = 0; i < n; ++i) s.by_start[i] = i;
  std::sort(s.by_start, s.by_start + n,
            [&](uint32_t a, uint32_t b) { return regions[a].start < regions[b].start; });
  for (size_t i = 0; i < n; ++i) {
    s.bounds[2 * i] = regions[i].start;
    s.bounds[2 * i + 1] = regions[i].end;
  }
  std::sort(s.bounds, s.bounds + 2 * n);
  const size_t bound_count = static_cast<size_t>(std::unique(s.bounds, s.bounds + 2 * n) - s.bounds);

  // A max-heap: the front loses to nothing open.
  auto loses_to = [&](uint32_t a, uint32_t b) {
    const ProfRegion &ra = regions[a], &rb = regions[b];
    return ra.start != rb.start ? ra.start < rb.start : ra.entry > rb.entry;
  };
  size_t open = 0, next = 0;
  for (size_t b = 0; b + 1 < bound_count; ++b) {
    const uint64_t at = s.bounds[b];
    while (next < n && regions[s.by_start[next]].start == at) {
      s.open[open++] = s.by_start[next++];
      std::push_heap(s.open, s.open + open, loses_to);
    }
    while (open > 0 && regions[s.open[0]].end <= at) std::pop_heap(s.open, s.open + open--, loses_to);
    if (open == 0) continue;
    const uint32_t owner = s.open[0];
    Segment* last = segment_count_ > 0 ? &segments_[segment_count_ - 1] : nullptr;
    if (last != nullptr && last->region == owner && last->end == at)
      last->end = s.bounds[b + 1];
    else
      segments_[segment_count_++] = {at, s.bounds[b + 1], owner};
  }
  for (size_t i = 0; i < segment_count_; ++i) starts_[i] = segments_[i].start;
  return 0;
}

const Segment* RegionTable::find(uint64_t pc) const noexcept {
  // Ticks come in runs in one place (a hot loop): the segment of the last hit first.
  // A hint only: any thread may overwrite it, any value is a valid index.
  const Segment& hinted = segments_[last_hit_.load(std::memory_order_relaxed)];
  if (pc >= hinted.start && pc < hinted.end) return &hinted;
  // The last segment starting at or before pc, by a binary search without branches on the
  // data (conditional moves): a tick's pc is unpredictable, a mispredicted branch per step
  // would cost more than the step.
  if (segment_count_ == 0 || pc < starts_[0]) return nullptr;
  const uint64_t* base = starts_;
  size_t n = segment_count_;
  while (n > 1) {
    const size_t half = n / 2;
    // Both candidates of the next step, fetched while this one resolves.
    __builtin_prefetch(base + half / 2);
    __builtin_prefetch(base + half + half / 2);
    base = base[half] <= pc ? base + half : base;
    n -= half;
  }
  const size_t found = static_cast<size_t>(base - starts_);
  const Segment& s = segments_[found];
  if (pc >= s.end) return nullptr;
  last_hit_.store(found, std::memory_order_relaxed);
  return &s;
}

CounterSlot RegionTable::locate(uint64_t pc) const noexcept {
  if (const Segment* s = find(pc)) {
    const ProfRegion& r = regions_[s->region];
    return {static_cast<int>(r.entry), counter_index(pc - r.start, r.scale, shift_)};
  }
  return {overflow_entry_, 0};
}

void RegionTable::count(uint64_t pc, uint64_t weight) const noexcept {
  if (const Segment* s = find(pc)) {
    const ProfRegion& r = regions_[s->region];
    add(r.base, counter_index(pc - r.start, r.scale, shift_), weight);
  } else if (overflow_ != nullptr) {
    add(overflow_, 0, weight);
  }
}

void RegionTable::add(void* base, uint64_t index, uint64_t weight) const noexcept {
  switch (counter_size_) {
    case 2:
      add_saturating<uint16_t>(base, index, weight);
      break;
    case 4:
      add_saturating<uint32_t>(base, index, weight);
      break;
    default:
      add_saturating<uint64_t>(base, index, weight);
      break;
  }
}

}  // namespace tally::runtime
