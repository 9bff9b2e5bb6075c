// The `tree` report (pprof -tree): every node of the trimmed graph with its callers above
// and its callees below, each edge with its weight and its share of the node's cum.
// Nodes are trimmed as pprof does for -tree (cum under node_fraction of the total
// dropped, then the first node_count kept, then edges under edge_fraction dropped).
// `peek` is the same report on the untrimmed graph, restricted to matching nodes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/nodes.h"
#include "analyze/top.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct TreeOptions {
  size_t node_count = 80;         // pprof's default for -tree; 0: every node
  bool sort_by_cum = false;
  double node_fraction = 0.005;   // pprof's defaults
  double edge_fraction = 0.001;
  NodeOptions nodes;
  NameFilters filters;
  std::string sample_index;
};

struct TreeLink {
  std::string name;  // the caller, or the callee
  int64_t weight = 0;
  bool inline_call = false;
};

struct TreeEntry {
  std::string name;
  int64_t flat = 0;
  int64_t cum = 0;
  std::vector<TreeLink> callers;  // heaviest first
  std::vector<TreeLink> callees;
};

struct TreeReport {
  TopReport summary;  // header data (file, type, totals, dropped nodes); its rows unused
  std::vector<TreeEntry> entries;
};

// Stack profiles only: a call-graph profile is an `unsupported` error.
core::Expected<TreeReport> compute_tree(const core::Profile& profile, const TreeOptions& options);

// pprof's layout: header, legend, then per entry its callers, itself, its callees.
std::string format_tree(const TreeReport& report);

}  // namespace tally::analyze
