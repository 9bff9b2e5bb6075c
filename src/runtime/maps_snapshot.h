// A snapshot of /proc/self/maps in fixed storage, taken when profiling starts (never in the
// signal handler), that the handler may search: which ranges are code, and the stack
// mapping of a thread that was not started through libtally (its bounds are not known).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tally::runtime {

struct MapRange {
  uintptr_t start = 0;
  uintptr_t end = 0;
  bool executable = false;
  bool writable = false;
};

class MapsSnapshot {
 public:
  static constexpr size_t kMaxRanges = 8192;

  // Reads /proc/self/maps with open/read (no stdio, no malloc). False if it cannot be read;
  // ranges past kMaxRanges are left out.
  bool capture();
  // The range holding `address`, or nullptr. Async-signal-safe.
  const MapRange* find(uintptr_t address) const;
  size_t size() const { return count_; }

 private:
  bool add_line(const char* line, size_t length);
  MapRange ranges_[kMaxRanges];
  size_t count_ = 0;
};

}  // namespace tally::runtime
