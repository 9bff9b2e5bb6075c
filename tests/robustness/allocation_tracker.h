// The size of the largest single allocation through operator new since the last reset.
// Linking allocation_tracker.cc into a test binary replaces the global operator new/delete
// (with malloc/free, so AddressSanitizer still sees every block).
#pragma once

#include <cstddef>

namespace tally::test {

void reset_largest_allocation();
size_t largest_allocation();

}  // namespace tally::test
