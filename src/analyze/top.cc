#include "analyze/top.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "analyze/node_report.h"
#include "analyze/report_graph.h"
#include "core/checked_math.h"
#include "core/sample_counts.h"

namespace tally::analyze {

namespace {

using core::accumulate_saturating;

// Call-graph profiles: self costs are one-frame samples. callgrind_annotate's inclusive
// cost of a function (one per source file: its file:function) is the sum of the calls
// into it when it is ever called, else its self cost plus the calls out of it; a node's
// cum is the sum over the functions it gathers. At line or address granularity the same
// rule applies to each node.
void sum_call_graph(const core::Profile& p, const NodeIndex& nodes, Granularity granularity,
                    size_t value, size_t count, NodeSums& sums) {
  const bool by_function =
      granularity == Granularity::functions || granularity == Granularity::files;
  // A "unit" is what the rule applies to: a function, or a node of a location without one.
  const size_t function_units = by_function ? p.functions.size() + 1 : 0;
  auto unit_of = [&](core::LocationId loc, NodeId node) -> size_t {
    const core::Location& l = p.location(loc);
    if (by_function && !l.lines.empty() && l.lines.front().function != 0)
      return l.lines.front().function;
    return function_units + node;
  };
  const size_t units = function_units + nodes.size();
  std::vector<int64_t> self(units, 0), calls_in(units, 0), calls_out(units, 0);
  std::vector<uint8_t> called(units, 0);
  std::vector<NodeId> node_of_unit(units, 0);
  std::vector<uint8_t> unit_used(units, 0);
  auto use = [&](core::LocationId loc) -> size_t {
    const auto ns = nodes.nodes(loc);
    if (ns.empty()) return SIZE_MAX;
    const size_t u = unit_of(loc, ns.front());
    node_of_unit[u] = ns.front();
    unit_used[u] = 1;
    return u;
  };
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const auto values = p.values(s);
    const auto stack = p.stack(s);
    if (stack.empty()) continue;
    const size_t u = use(stack[0]);
    if (u == SIZE_MAX) continue;
    accumulate_saturating(self[u], values[value]);
    accumulate_saturating(sums.flat[node_of_unit[u]], values[value]);
    accumulate_saturating(sums.flat_samples[node_of_unit[u]], values[count]);
  }
  for (const core::CallEdge& e : p.call_graph.calls) {
    if (value >= e.inclusive.size()) continue;
    const size_t from = use(e.caller), to = use(e.callee);
    if (from == SIZE_MAX || to == SIZE_MAX) continue;
    accumulate_saturating(calls_out[from], e.inclusive[value]);
    accumulate_saturating(calls_in[to], e.inclusive[value]);
    called[to] = 1;
  }
  for (size_t u = 0; u < units; ++u)
    if (unit_used[u])
      accumulate_saturating(sums.cum[node_of_unit[u]],
                            called[u] ? calls_in[u] : core::add_saturating(self[u], calls_out[u]));
}

// pprof's "(inline)" marks: an edge parent -> n is inline when n is never the outermost
// frame of its location on it; a node with only inline edges in is "(inline)", with both
// kinds "(partial-inline)". Only the kept nodes take part (the rest are skipped over).
// Per node, a byte: bit kInlineEdge and bit kCallEdge for the kinds of edges into it.
constexpr uint8_t kInlineEdge = 1, kCallEdge = 2;
const char* inline_label(uint8_t edges) {
  if (!(edges & kInlineEdge)) return "";
  return edges & kCallEdge ? "(partial-inline)" : "(inline)";
}
std::vector<uint8_t> inline_edges(const core::Profile& p, const NodeIndex& nodes,
                                  const LocationFilter& filter, size_t value,
                                  const std::vector<uint8_t>& kept) {
  std::vector<uint8_t> edges_in(nodes.size(), 0);
  if (!nodes.has_inline_frames()) return edges_in;
  // Only a node that is some location's inner (inlined) frame can have an inline edge in,
  // and only such a node gets a mark: the edges into the others, calls wherever they
  // occur, change no label. So a sample counts only when one of its locations has such a
  // kept node (inner there or elsewhere: a call into it counts too; in deep stacks through
  // code without inline frames few samples do), and edges are looked at only into such
  // nodes. A byte per location says which nodes it has.
  constexpr uint8_t kKeptNode = 1, kInlinableNode = 2;
  std::vector<uint8_t> inner(nodes.size(), 0);
  for (core::LocationId l = 1; l <= p.locations.size(); ++l) {
    const auto ns = nodes.nodes(l);
    for (size_t k = 0; k + 1 < ns.size(); ++k) inner[ns[k]] |= kept[ns[k]];
  }
  std::vector<uint8_t> location_nodes(p.locations.size() + 1, 0);
  for (core::LocationId l = 1; l <= p.locations.size(); ++l)
    for (NodeId n : nodes.nodes(l)) {
      if (kept[n]) location_nodes[l] |= kKeptNode;
      if (inner[n]) location_nodes[l] |= kInlinableNode;
    }
  // Per edge into an inner node: inline as long as every sample's first use of it was.
  std::unordered_map<uint64_t, bool> edge_inline;
  std::vector<uint64_t> seen;  // this sample's edges: a sample counts an edge once, by its
                               // first (outermost) use, as pprof does
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const auto stack = p.stack(s);
    if (std::none_of(stack.begin(), stack.end(),
                     [&](core::LocationId l) { return location_nodes[l] & kInlinableNode; }))
      continue;
    if (p.values(s)[value] == 0 || !filter.keeps(s, stack)) continue;
    seen.clear();
    bool have_parent = false;
    NodeId parent = 0;
    for (size_t i = stack.size(); i-- > 0;) {
      if (!(location_nodes[stack[i]] & kKeptNode)) continue;
      const auto ns = nodes.nodes(stack[i]);
      for (size_t k = ns.size(); k-- > 0;) {
        const NodeId n = ns[k];
        if (!kept[n]) continue;
        if (have_parent && n != parent && inner[n]) {
          const uint64_t edge = (uint64_t(parent) << 32) | n;
          if (std::find(seen.begin(), seen.end(), edge) == seen.end()) {
            seen.push_back(edge);
            const bool is_inline = k + 1 != ns.size();
            auto [it, fresh] = edge_inline.try_emplace(edge, is_inline);
            if (!fresh && !is_inline) it->second = false;
          }
        }
        have_parent = true;
        parent = n;
      }
    }
  }
  for (const auto& [edge, is_inline] : edge_inline) {
    const auto to = static_cast<NodeId>(edge & 0xffffffffu);
    edges_in[to] |= is_inline ? kInlineEdge : kCallEdge;
  }
  return edges_in;
}

}  // namespace

core::Expected<size_t> report_value_index(const core::Profile& profile, const std::string& spec) {
  if (profile.sample_types.empty())
    return core::Error{"the profile has no sample types", core::ErrorKind::unsupported};
  if (spec.empty()) {
    if (profile.default_sample_type != 0) {
      int i = profile.sample_type_index(profile.str(profile.default_sample_type));
      if (i >= 0) return static_cast<size_t>(i);
    }
    return profile.sample_types.size() - 1;
  }
  return core::find_value_index(profile, spec);
}

core::Expected<TopReport> compute_top(const core::Profile& p, const TopOptions& options) {
  auto basis = node_report_basis(p, options.nodes, options.filters, options.sample_index);
  if (!basis) return basis.error();
  return compute_top(p, *basis, options);
}

TopReport compute_top(const core::Profile& p, NodeReportBasis& basis, const TopOptions& options) {
  TopReport report = std::move(basis.header);
  const NodeIndex& nodes = basis.nodes;
  // Made once (not a zeroed set replaced by sum_nodes' own): these are the peak's.
  NodeSums sums = report.call_graph ? NodeSums(nodes.size())
                                    : sum_nodes(p, nodes, basis.filter, basis.value, basis.count);
  if (report.call_graph)
    sum_call_graph(p, nodes, options.nodes.granularity, basis.value, basis.count, sums);

  const TrimmedNodes trimmed =
      trim_nodes(nodes, sums.flat, sums.cum,
                 {.node_fraction = options.node_fraction,
                  .node_count = options.node_count,
                  .sort_by_cum = options.sort_by_cum});
  set_shown_nodes(report, trimmed, sums.flat, sums.cum, sums.flat_samples, options.node_fraction);

  if (!report.call_graph) {
    std::vector<uint8_t> is_kept(nodes.size(), 0);
    for (NodeId n : trimmed.nodes) is_kept[n] = 1;
    const std::vector<uint8_t> edges_in =
        inline_edges(p, nodes, basis.filter, basis.value, is_kept);
    for (size_t i = 0; i < trimmed.nodes.size(); ++i)
      report.rows[i].inline_label = inline_label(edges_in[trimmed.nodes[i]]);
  }
  return report;
}

}  // namespace tally::analyze
