// The sampling error of a share: a function seen in k of n samples has flat share k/n,
// known only to within a binomial confidence interval. None of pprof, perf report or
// callgrind_annotate shows it; `tally top` does, as its ± column.
#pragma once

#include <cstdint>
#include <string>

namespace tally::analyze {

// Half-width, in percentage points, of the 95% confidence interval of the share
// hits/samples (normal approximation of the binomial: 1.96 * sqrt(p (1 - p) / n)).
// 0 when there are no samples.
double share_interval_95(int64_t hits, int64_t samples);

// "±1.2%": one decimal from 1 point up, two below (so small shares still show an error),
// "±0%" when exactly zero.
std::string format_interval(double half_width_percent);

}  // namespace tally::analyze
