// Which of a sorted list of [low, high) ranges holds an address, where ranges nest or
// overlap a little (a function split in hot and cold parts, a compile unit with gaps).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tally::symbolize {

// How far back the range lookups look past the nearest lower start: ranges nest or
// overlap only a little (a function split in hot and cold parts, a CU with gaps).
inline constexpr size_t kOverlapScan = 16;

// The range (sorted by `low`) holding `address` among the kOverlapScan nearest lower
// starts, or null.
template <class Range>
const Range* find_range(const std::vector<Range>& ranges, uint64_t address) {
  auto after = std::upper_bound(ranges.begin(), ranges.end(), address,
                                [](uint64_t a, const Range& r) { return a < r.low; });
  for (size_t scanned = 0; after != ranges.begin() && scanned < kOverlapScan; ++scanned) {
    --after;
    if (address < after->high) return &*after;
  }
  return nullptr;
}

}  // namespace tally::symbolize
