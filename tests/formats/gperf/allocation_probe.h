// Records the largest single heap allocation made through operator new, so a test can
// prove that a reader did not trust a size field from the file. Linking allocation_probe.cc
// replaces the global operator new/delete of the whole test executable.
#pragma once

#include <cstddef>

namespace tally::test {

// Starts recording (and forgets earlier allocations) until the probe is destroyed.
class AllocationProbe {
 public:
  AllocationProbe();
  ~AllocationProbe();
  AllocationProbe(const AllocationProbe&) = delete;
  AllocationProbe& operator=(const AllocationProbe&) = delete;
  size_t largest() const;  // bytes of the largest single allocation while recording
};

}  // namespace tally::test
