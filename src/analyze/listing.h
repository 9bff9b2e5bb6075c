// What the annotated listings (list, disasm) share: their REGEX, the value they report,
// pprof's Total (every sample, before filters), the name filters, and per-node sums in
// which a call graph's calls count at their call sites.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/report_graph.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct ListingBasis {
  std::regex pattern;
  size_t value = 0;
  std::string sample_unit;
  int64_t total = 0;
  LocationFilter filter;
  std::vector<std::string> warnings;  // filters that matched nothing
};

// An invalid REGEX or --sample-index is an error, as are filters on a call graph.
core::Expected<ListingBasis> listing_basis(const core::Profile& profile, const std::string& regex,
                                           const NameFilters& filters,
                                           const std::string& sample_index);

// pprof's value columns in the listings: each value in its own best unit, "." for zero.
struct ListingValues {
  std::string unit;
  std::string operator()(int64_t value) const;  // "111ms"
  std::string or_dot(int64_t value) const;      // "." for 0
  // "     111ms      111ms (flat, cum) 40.22% of Total\n"
  std::string routine_totals(int64_t flat, int64_t cum, int64_t total) const;
};

// sum_nodes, and on a call-graph profile each node's cum also takes the inclusive cost of
// the calls made from its positions, as callgrind_annotate shows them under a source line.
NodeSums sum_positions(const core::Profile& profile, const NodeIndex& nodes,
                       const LocationFilter& filter, size_t value);

}  // namespace tally::analyze
