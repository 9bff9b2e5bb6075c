// The `diff` report: per node (function, file, ...), its flat and cum share of each
// profile's own total, the change, and whether the flat change is more than sampling
// noise: a two-proportion z-test on the sample counts (a node's flat samples k of n
// in each profile). Built on compute_top, so nodes, filters and values are top's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/top.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct DiffOptions {
  TopOptions top;             // nodes, filters, sample index (node_count/sort unused)
  size_t node_count = 0;      // 0: every node
  double significance = 0.05;  // p below this marks a change significant
};

struct ZTest {
  double z = 0;  // positive when the share grew
  double p = 1;  // two-sided
};
// Two-proportion z-test of k1/n1 against k2/n2 with the pooled proportion; z = 0, p = 1
// when it cannot tell (no samples, or a pooled share of 0 or 1).
ZTest two_proportion_z_test(int64_t k1, int64_t n1, int64_t k2, int64_t n2);

struct DiffRow {
  std::string name;
  int64_t base_flat = 0, new_flat = 0, base_cum = 0, new_cum = 0;
  int64_t base_flat_samples = 0, new_flat_samples = 0;
  double base_flat_share = 0, new_flat_share = 0;  // fractions of each total
  double base_cum_share = 0, new_cum_share = 0;
  ZTest test;
  bool tested = false;       // false on call-graph profiles: their counts are exact
  bool significant = false;  // tested and p < significance
  double flat_change() const { return new_flat_share - base_flat_share; }
  double cum_change() const { return new_cum_share - base_cum_share; }
};

struct DiffReport {
  int64_t base_total = 0, new_total = 0;
  int64_t base_samples = 0, new_samples = 0;
  std::string sample_type, sample_unit;
  double significance = 0.05;
  size_t significant = 0;  // rows marked
  size_t dropped = 0;      // rows cut by node_count
  std::vector<DiffRow> rows;  // largest |flat change| first, then largest |cum change|
  std::vector<std::string> warnings;
};

core::Expected<DiffReport> compute_diff(const core::Profile& base, const core::Profile& next,
                                        const DiffOptions& options);

// The table: shares as percentages of each total, changes in percentage points.
std::string format_diff(const DiffReport& report);

}  // namespace tally::analyze
