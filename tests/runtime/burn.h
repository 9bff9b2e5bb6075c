// CPU burners whose code lies in sections of their own, so that a test knows the exact
// address range every tick inside them has its pc in, and profiling regions that cover
// them.
#pragma once

#include <cstdint>
#include <vector>

#include "tally/sprofil.h"

namespace tally::test {

// Spins until the calling thread has used `cpu_ns` more nanoseconds of CPU time.
void burn_a(uint64_t cpu_ns);
void burn_b(uint64_t cpu_ns);

struct CodeRange {
  uint64_t start, end;
};
CodeRange burn_a_range();
CodeRange burn_b_range();

uint64_t thread_cpu_ns();
uint64_t process_cpu_ns();

// 16-bit counters, one per 2 bytes of `range` (scale 65536).
struct Histogram {
  explicit Histogram(CodeRange range);
  prof entry();
  uint64_t total() const;
  CodeRange range;
  std::vector<uint16_t> counters;
};

}  // namespace tally::test
