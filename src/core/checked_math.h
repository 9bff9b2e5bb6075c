// Sample values come from untrusted files; sums, differences, products and negations saturate
// at the int64 limits instead of overflowing (which would be undefined behaviour).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace tally::core {

inline int64_t add_saturating(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t sub_saturating(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t mul_saturating(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

// -INT64_MIN is INT64_MAX.
inline int64_t negate_saturating(int64_t v) { return sub_saturating(0, v); }

// |INT64_MIN| is INT64_MAX.
inline int64_t abs_saturating(int64_t v) { return v < 0 ? negate_saturating(v) : v; }

// `a += b` saturating, for the accumulators of the reports.
inline void accumulate_saturating(int64_t& a, int64_t b) { a = add_saturating(a, b); }

// A double (a share of a total, say) as int64: NaN is 0, values beyond the limits clamp to
// them (a plain cast of 2^63 is undefined behaviour).
inline int64_t to_int64_saturating(double v) {
  if (std::isnan(v)) return 0;
  // 2^63 is exact in a double; every double below it converts.
  constexpr double kLimit = 9223372036854775808.0;
  if (v >= kLimit) return std::numeric_limits<int64_t>::max();
  if (v < -kLimit) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

}  // namespace tally::core
