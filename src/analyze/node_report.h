// The steps the node reports (top, tree, peek, traces) share before their own, as pprof's
// driver does them once for every report: the value to report, pprof's header (labels and
// totals, taken before filtering), the name filter and the node index; then pprof's node
// trimming (nodes under nodefraction of the graph dropped, the rest sorted, the first
// nodecount kept), written once for top and tree.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/nodes.h"
#include "analyze/top.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct NodeReportBasis {
  size_t value = 0;  // index of the reported value
  size_t count = 0;  // index of the sample count the ± interval is computed from
  TopReport header;  // labels, totals, active filters and filter warnings; no rows yet
  LocationFilter filter;
  NodeIndex nodes;
};

// An unknown --sample-index, filters on a call-graph profile or a bad filter regex is an error.
core::Expected<NodeReportBasis> node_report_basis(const core::Profile& profile,
                                                  const NodeOptions& nodes,
                                                  const NameFilters& filters,
                                                  const std::string& sample_index);

// The cut-off of a node or edge fraction of a total, |total x fraction|, saturating.
int64_t fraction_cutoff(int64_t total, double fraction);

struct TrimOptions {
  double node_fraction = 0;  // drop nodes whose |cum| is under this share of the flat sum
  size_t node_count = 0;     // then keep the first N; 0: all
  bool sort_by_cum = false;
};

struct TrimmedNodes {
  std::vector<NodeId> nodes;       // kept, in report order
  std::vector<std::string> names;  // the name of each kept node
  size_t dropped = 0;              // under the node fraction
  size_t before_count = 0;         // left after dropping, before node_count
};

// `flat` and `cum` per node of `index`, on the untrimmed graph (a kept node's values do
// not change when others are dropped). Order: pprof's graph.Nodes.Sort (flat or cum
// descending, then name, then the other value, then the node's key).
TrimmedNodes trim_nodes(const NodeIndex& index, std::span<const int64_t> flat,
                        std::span<const int64_t> cum, const TrimOptions& options);

// Sets the header's node lines from the trimmed nodes: a row (name, flat, cum and, when
// given, flat_samples) per kept node, shown_flat, the dropped-node line, the count before
// --nodecount, and the output unit pprof picks for those rows.
void set_shown_nodes(TopReport& report, const TrimmedNodes& trimmed, std::span<const int64_t> flat,
                     std::span<const int64_t> cum, std::span<const int64_t> flat_samples,
                     double node_fraction);

}  // namespace tally::analyze
