// pprof's call graph of a stack profile (its graph.New): per node flat (the sample's
// innermost kept frame) and cum (once per sample), and per caller -> callee edge the
// weight of the samples it is on (once per sample). When only some nodes are kept, the
// others are skipped over: an edge then joins the nearest kept frames ("residual"), and a
// sample whose leaf is not kept adds no flat. Shared by tree and peek.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/nodes.h"
#include "core/profile.h"

namespace tally::analyze {

struct GraphEdge {
  NodeId caller = 0;
  NodeId callee = 0;
  int64_t weight = 0;
  bool inline_call = true;  // false once any sample has it as a real call
  bool residual = false;    // skips over nodes that were not kept
};

struct ReportGraph {
  std::vector<int64_t> flat, cum;  // per node
  std::vector<GraphEdge> edges;
};

// `kept` (per node, may be null: all) selects the nodes of the graph; samples that
// `filter` drops or whose `value` is 0 are skipped.
// Only each node's flat and cum (no edges), and the flat counted in samples of value
// `count` (for top's interval): the part of the graph that top, list and disasm need.
struct NodeSums {
  std::vector<int64_t> flat, cum, flat_samples;
  explicit NodeSums(size_t n) : flat(n), cum(n), flat_samples(n) {}
};
NodeSums sum_nodes(const core::Profile& profile, const NodeIndex& nodes,
                   const LocationFilter& filter, size_t value, size_t count);

ReportGraph build_report_graph(const core::Profile& profile, const NodeIndex& nodes,
                               const LocationFilter& filter, size_t value,
                               const std::vector<uint8_t>* kept);

}  // namespace tally::analyze
