#include "analyze/tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "analyze/report_graph.h"
#include "analyze/top_text.h"
#include "analyze/units.h"

namespace tally::analyze {

namespace {

int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

// pprof's node order (graph.Nodes.Sort): flat (or cum) descending, then name, then the
// other value, then the node's key.
void sort_nodes(std::vector<NodeId>& order, const NodeIndex& nodes, const ReportGraph& g,
                const std::vector<std::string>& names, bool by_cum) {
  auto by_key = [&](NodeId a, NodeId b) {
    const NodeKey &x = nodes.key(a), &y = nodes.key(b);
    return std::tie(x.address, x.line, x.start_line, x.file, x.objfile) <
           std::tie(y.address, y.line, y.start_line, y.file, y.objfile);
  };
  const auto& first = by_cum ? g.cum : g.flat;
  const auto& second = by_cum ? g.flat : g.cum;
  std::sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    if (abs64(first[a]) != abs64(first[b])) return abs64(first[a]) > abs64(first[b]);
    if (names[a] != names[b]) return names[a] < names[b];
    if (abs64(second[a]) != abs64(second[b])) return abs64(second[a]) > abs64(second[b]);
    return by_key(a, b);
  });
}

// pprof's edge order: weight descending, then caller name, then callee name.
void sort_links(std::vector<TreeLink>& links) {
  std::stable_sort(links.begin(), links.end(), [](const TreeLink& a, const TreeLink& b) {
    if (a.weight != b.weight) return abs64(a.weight) > abs64(b.weight);
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
  // The header (and the output unit) are top's for the same selection of nodes.
  TopOptions top{.node_count = options.node_count,
                 .sort_by_cum = options.sort_by_cum,
                 .node_fraction = options.node_fraction,
                 .nodes = options.nodes,
                 .filters = options.filters,
                 .sample_index = options.sample_index};
  auto summary = compute_top(p, top);
  if (!summary) return summary.error();
  auto value = report_value_index(p, options.sample_index);
  if (!value) return value.error();
  auto filter = LocationFilter::create(p, options.filters);
  if (!filter) return filter.error();
  const NodeIndex nodes(p, options.nodes, &*filter);

  // Node selection as in pprof's newTrimmedGraph, on the full graph's values (a kept
  // node's flat and cum do not change when others are dropped).
  const ReportGraph full = build_report_graph(p, nodes, *filter, *value, nullptr);
  std::vector<NodeId> order;
  int64_t graph_total = 0;
  for (NodeId n = 0; n < nodes.size(); ++n) {
    if (full.flat[n] == 0 && full.cum[n] == 0) continue;
    order.push_back(n);
    graph_total += full.flat[n];
  }
  const int64_t node_cutoff =
      abs64(static_cast<int64_t>(static_cast<double>(graph_total) * options.node_fraction));
  const int64_t edge_cutoff =
      abs64(static_cast<int64_t>(static_cast<double>(graph_total) * options.edge_fraction));
  if (node_cutoff > 0)
    std::erase_if(order, [&](NodeId n) { return abs64(full.cum[n]) < node_cutoff; });
  std::vector<std::string> names(nodes.size());
  for (NodeId n : order) names[n] = nodes.name(n);
  sort_nodes(order, nodes, full, names, options.sort_by_cum);
  if (options.node_count > 0 && order.size() > options.node_count)
    order.resize(options.node_count);

  std::vector<uint8_t> kept(nodes.size(), 0);
  for (NodeId n : order) kept[n] = 1;
  const ReportGraph g = build_report_graph(p, nodes, *filter, *value, &kept);

  TreeReport report;
  std::vector<size_t> entry_of(nodes.size(), 0);
  for (NodeId n : order) {
    entry_of[n] = report.entries.size();
    report.entries.push_back(
        {.name = names[n], .flat = g.flat[n], .cum = g.cum[n], .callers = {}, .callees = {}});
  }
  for (const GraphEdge& e : g.edges) {
    if (abs64(e.weight) < edge_cutoff) continue;
    report.entries[entry_of[e.callee]].callers.push_back(
        {.name = names[e.caller], .weight = e.weight, .inline_call = e.inline_call});
    report.entries[entry_of[e.caller]].callees.push_back(
        {.name = names[e.callee], .weight = e.weight, .inline_call = e.inline_call});
  }
  for (TreeEntry& entry : report.entries) {
    sort_links(entry.callers);
    sort_links(entry.callees);
  }
  report.summary = std::move(*summary);
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
    flat_sum += e.flat;
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
