// How pprof writes values and percentages (its internal/measurement package): values
// scaled to a unit picked from the smallest shown value ("276ms", "1.10s", "12.50MB"),
// counts as plain numbers, percentages as "40.22%", "  100%", " 0.36%".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tally::analyze {

// `value` in `from_unit` expressed in `to_unit`; to_unit "auto"/"minimum" picks the
// largest unit the value reaches at least 1 of. Returns the number and the unit name
// ("ms", "kB"; "" for counts and unknown units).
struct Scaled {
  double value = 0;
  std::string unit;
};
Scaled scale(int64_t value, std::string_view from_unit, std::string_view to_unit);

// The number with two decimals, ".00" dropped, then the unit; "0" for zero.
std::string scaled_label(int64_t value, std::string_view from_unit, std::string_view to_unit);

// pprof's Percentage: value of total as "%5.2f%%", "  100%" near 100, "%5.2g%%" below 1.
std::string percentage(int64_t value, int64_t total);

// pprof's choice of output unit: from the smallest non-zero shown value, moved up one
// unit when the total is over 100x larger and in another unit. `min_value` 0: use total.
std::string select_output_unit(int64_t min_value, int64_t total, std::string_view sample_unit);

}  // namespace tally::analyze
