#include "analyze/peek.h"

#include <algorithm>
#include <map>
#include <regex>
#include <utility>

#include "analyze/node_report.h"
#include "core/checked_math.h"

namespace tally::analyze {

namespace {

using core::abs_saturating;

void sort_links(std::vector<TreeLink>& links) {
  std::stable_sort(links.begin(), links.end(), [](const TreeLink& a, const TreeLink& b) {
    if (a.weight != b.weight) return abs_saturating(a.weight) > abs_saturating(b.weight);
    return a.name < b.name;
  });
}

// Callgrind: every node of top's report, with the calls in and out of it summed per
// caller / callee node (calls within one node, such as recursion, are left out).
core::Expected<TreeReport> call_graph_tree(const core::Profile& p, const PeekOptions& options) {
  auto basis = node_report_basis(p, options.nodes, options.filters, options.sample_index);
  if (!basis) return basis.error();
  TopOptions top;
  top.node_fraction = 0;
  top.nodes = options.nodes;
  TopReport summary = compute_top(p, *basis, top);
  const size_t value = basis->value;
  const NodeIndex& nodes = basis->nodes;
  std::map<std::pair<std::string, std::string>, int64_t> calls;  // (caller, callee) -> cost
  for (const core::CallEdge& e : p.call_graph.calls) {
    if (value >= e.inclusive.size()) continue;
    const auto from = nodes.nodes(e.caller), to = nodes.nodes(e.callee);
    if (from.empty() || to.empty()) continue;
    std::string caller = nodes.name(from.front()), callee = nodes.name(to.front());
    if (caller == callee) continue;
    int64_t& cost = calls[{std::move(caller), std::move(callee)}];
    cost = core::add_saturating(cost, e.inclusive[value]);
  }
  TreeReport report;
  std::map<std::string, size_t> entry_of;
  for (const TopRow& row : summary.rows) {
    entry_of[row.name] = report.entries.size();
    report.entries.push_back({.name = row.name, .flat = row.flat, .cum = row.cum, .callers = {}, .callees = {}});
  }
  for (const auto& [edge, cost] : calls) {
    const auto from = entry_of.find(edge.first), to = entry_of.find(edge.second);
    if (from != entry_of.end())
      report.entries[from->second].callees.push_back({.name = edge.second, .weight = cost, .inline_call = false});
    if (to != entry_of.end())
      report.entries[to->second].callers.push_back({.name = edge.first, .weight = cost, .inline_call = false});
  }
  for (TreeEntry& entry : report.entries) {
    sort_links(entry.callers);
    sort_links(entry.callees);
  }
  report.summary = std::move(summary);
  return report;
}

}  // namespace

core::Expected<TreeReport> compute_peek(const core::Profile& p, const PeekOptions& options) {
  auto pattern = compile_report_regex(options.regex);
  if (!pattern) return pattern.error();
  core::Expected<TreeReport> report = core::Error{"", core::ErrorKind::invalid_input};
  if (p.call_graph.present) {
    if (options.filters.any())
      return core::Error{"--focus, --ignore, --hide, --show and the label filters work on stack "
                         "profiles; this is a call-graph profile (callgrind)",
                         core::ErrorKind::unsupported};
    report = call_graph_tree(p, options);
  } else {
    // pprof's -peek: no trimming at all.
    TreeOptions untrimmed;
    untrimmed.node_count = 0;
    untrimmed.node_fraction = 0;
    untrimmed.edge_fraction = 0;
    untrimmed.nodes = options.nodes;
    untrimmed.filters = options.filters;
    untrimmed.sample_index = options.sample_index;
    report = compute_tree(p, untrimmed);
  }
  if (!report) return report;
  std::erase_if(report->entries,
                [&](const TreeEntry& e) { return !std::regex_search(e.name, *pattern); });
  if (report->entries.empty())
    return core::Error{"no matches found for regexp: " + options.regex,
                       core::ErrorKind::invalid_input};
  return report;
}

}  // namespace tally::analyze
