// The `top` report (pprof -top): per node, flat (cost where the node is the leaf) and cum
// (cost of the samples the node is on, once per sample even under recursion), sorted,
// trimmed like pprof (nodes under nodefraction of the total dropped, then the first
// nodecount kept: node_report.h's trim_nodes, shared with tree). On a call-graph profile
// (callgrind) flat is the self cost and cum the inclusive cost as callgrind_annotate
// --inclusive=yes computes it. No printing here: top_text.h lays the report out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/nodes.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct TopOptions {
  size_t node_count = 0;  // 0: every node (pprof's default for -top)
  bool sort_by_cum = false;
  double node_fraction = 0.005;  // pprof's default: drop nodes with cum < 0.5% of total
  NodeOptions nodes;
  NameFilters filters;
  std::string sample_index;  // name, type/unit or index; "" = default type, else last
};

struct TopRow {
  std::string name;
  std::string inline_label;  // "", "(inline)" or "(partial-inline)" as pprof marks them
  int64_t flat = 0;
  int64_t cum = 0;
  int64_t flat_samples = 0;  // flat in sample counts, for the confidence interval
};

struct TopReport {
  // Header data (pprof's labels).
  std::string file;      // base name of the main mapping's file, "" when none
  std::string build_id;  // of the main mapping
  std::vector<std::string> comments;  // those not starting with '#'
  std::string sample_type;            // "cpu"
  std::string sample_unit;            // "nanoseconds"
  std::string output_unit;            // the unit values are printed in ("ms")
  int64_t time_nanos = 0;
  int64_t duration_nanos = 0;
  std::vector<std::string> active_filters;
  bool call_graph = false;

  int64_t total = 0;          // of the chosen value over every sample (before filters)
  int64_t total_samples = 0;  // the sample count the ± interval is computed from
  int64_t shown_flat = 0;     // sum of flat over the rows
  size_t dropped_nodes = 0;   // under the node fraction
  int64_t drop_cutoff = 0;    // total * node_fraction, as pprof prints it
  size_t nodes_before_count = 0;  // nodes left after dropping, before --nodecount
  std::vector<TopRow> rows;
  std::vector<std::string> warnings;  // e.g. a filter that matched nothing
};

core::Expected<TopReport> compute_top(const core::Profile& profile, const TopOptions& options);

// The same on a basis already made (node_report.h), whose header it takes: for a report
// that needs top's rows and the basis' node index too (peek on a call graph).
struct NodeReportBasis;
TopReport compute_top(const core::Profile& profile, NodeReportBasis& basis,
                      const TopOptions& options);

// The sample type pprof reports by default: the profile's default type, else the last;
// otherwise core::find_value_index's rules for a given name or index.
core::Expected<size_t> report_value_index(const core::Profile& profile, const std::string& spec);

}  // namespace tally::analyze
