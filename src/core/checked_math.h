// Sample values come from untrusted files; sums and products saturate at the int64 limits
// instead of overflowing (which would be undefined behaviour).
#pragma once

#include <cstdint>
#include <limits>

namespace tally::core {

inline int64_t add_saturating(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t mul_saturating(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

}  // namespace tally::core
