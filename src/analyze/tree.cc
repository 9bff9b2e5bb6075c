#include "analyze/tree.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyze/node_report.h"
#include "analyze/report_graph.h"
#include "analyze/top_text.h"
#include "analyze/units.h"
#include "core/checked_math.h"

namespace tally::analyze {

namespace {

using core::abs_saturating;

// pprof's edge order: weight descending, then caller name, then callee name.
void sort_links(std::vector<TreeLink>& links) {
  std::stable_sort(links.begin(), links.end(), [](const TreeLink& a, const TreeLink& b) {
    if (a.weight != b.weight) return abs_saturating(a.weight) > abs_saturating(b.weight);
    return a.name < b.name;
  });
}

const char* kSeparator = "----------------------------------------------------------+-------------";
const char* kLegend = "      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t ";

}  // namespace

core::Expected<TreeReport> compute_tree(const core::Profile& p, const TreeOptions& options) {
  if (p.call_graph.present)
    return core::Error{"tree works on stack profiles; this is a call-graph profile (callgrind)",
                       core::ErrorKind::unsupported};
  auto basis = node_report_basis(p, options.nodes, options.filters, options.sample_index);
  if (!basis) return basis.error();
  const NodeIndex& nodes = basis->nodes;

  // Node selection as in pprof's newTrimmedGraph, on the full graph's values; the header
  // (and the output unit) are top's for the same selection of nodes.
  const ReportGraph full = build_report_graph(p, nodes, basis->filter, basis->value, nullptr);
  const TrimmedNodes trimmed =
      trim_nodes(nodes, full.flat, full.cum,
                 {.node_fraction = options.node_fraction,
                  .node_count = options.node_count,
                  .sort_by_cum = options.sort_by_cum});
  TreeReport report;
  report.summary = std::move(basis->header);
  set_shown_nodes(report.summary, trimmed, full.flat, full.cum, {}, options.node_fraction);

  int64_t graph_total = 0;
  for (int64_t flat : full.flat) core::accumulate_saturating(graph_total, flat);
  const int64_t edge_cutoff = fraction_cutoff(graph_total, options.edge_fraction);

  std::vector<uint8_t> kept(nodes.size(), 0);
  for (NodeId n : trimmed.nodes) kept[n] = 1;
  const ReportGraph g = build_report_graph(p, nodes, basis->filter, basis->value, &kept);

  std::vector<size_t> entry_of(nodes.size(), 0);
  for (size_t i = 0; i < trimmed.nodes.size(); ++i) {
    const NodeId n = trimmed.nodes[i];
    entry_of[n] = i;
    report.entries.push_back({.name = trimmed.names[i],
                              .flat = g.flat[n],
                              .cum = g.cum[n],
                              .callers = {},
                              .callees = {}});
  }
  for (const GraphEdge& e : g.edges) {
    if (abs_saturating(e.weight) < edge_cutoff) continue;
    TreeEntry &caller = report.entries[entry_of[e.caller]],
              &callee = report.entries[entry_of[e.callee]];
    callee.callers.push_back({.name = caller.name, .weight = e.weight, .inline_call = e.inline_call});
    caller.callees.push_back({.name = callee.name, .weight = e.weight, .inline_call = e.inline_call});
  }
  for (TreeEntry& entry : report.entries) {
    sort_links(entry.callers);
    sort_links(entry.callees);
  }
  return report;
}

std::string format_tree(const TreeReport& r) {
  std::string out;
  for (const std::string& line : top_header(r.summary)) {
    out += line;
    out += '\n';
  }
  out += kSeparator;
  out += '\n';
  out += kLegend;
  out += '\n';
  auto link_line = [&](const TreeLink& link, int64_t cum) {
    fmt::format_to(std::back_inserter(out), "{:>50} {} |   {}{}\n",
                   format_value(r.summary, link.weight), percentage(link.weight, cum), link.name,
                   link.inline_call ? " (inline)" : "");
  };
  int64_t flat_sum = 0;
  const int64_t total = r.summary.total;
  for (const TreeEntry& e : r.entries) {
    out += kSeparator;
    out += '\n';
    for (const TreeLink& link : e.callers) link_line(link, e.cum);
    core::accumulate_saturating(flat_sum, e.flat);
    fmt::format_to(std::back_inserter(out), "{:>10} {} {} {:>10} {}                | {}\n",
                   format_value(r.summary, e.flat), percentage(e.flat, total),
                   percentage(flat_sum, total), format_value(r.summary, e.cum),
                   percentage(e.cum, total), e.name);
    for (const TreeLink& link : e.callees) link_line(link, e.cum);
  }
  if (!r.entries.empty()) {
    out += kSeparator;
    out += '\n';
  }
  return out;
}

}  // namespace tally::analyze
