#include "analyze/report_graph.h"

#include <cstdint>
#include <unordered_map>

#include "core/checked_math.h"

namespace tally::analyze {

using core::accumulate_saturating;

NodeSums sum_nodes(const core::Profile& p, const NodeIndex& nodes, const LocationFilter& filter,
                   size_t value, size_t count) {
  // Each location's node when it has one (nearly all: inline frames are few), from one flat
  // table: one load a frame, not two, in the hot loop of a report on a deep profile (3.9M
  // frames in 76k stacks). kNone: no node (hidden); kMany: its nodes from the index.
  constexpr NodeId kNone = UINT32_MAX, kMany = UINT32_MAX - 1;
  std::vector<NodeId> node_of(p.locations.size() + 1, kNone);
  for (core::LocationId loc = 1; loc <= p.locations.size(); ++loc) {
    const auto ns = nodes.nodes(loc);
    if (!ns.empty()) node_of[loc] = ns.size() == 1 && ns[0] < kMany ? ns[0] : kMany;
  }
  NodeSums sums(nodes.size());
  // A stamp per node marks the last sample that counted it (sample index + 1).
  std::vector<uint64_t> stamp(nodes.size(), 0);
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const auto values = p.values(s);
    if (values[value] == 0) continue;
    const auto stack = p.stack(s);
    if (!filter.keeps(s, stack)) continue;
    const int64_t w = filter.value(p, s, value);
    bool have_leaf = false;
    NodeId leaf = 0;
    auto count_node = [&](NodeId n) {
      if (!have_leaf) {
        have_leaf = true;
        leaf = n;
      }
      if (stamp[n] == s + 1) return;
      stamp[n] = s + 1;
      accumulate_saturating(sums.cum[n], w);
    };
    for (core::LocationId loc : stack) {
      const NodeId n = node_of[loc];
      if (n < kMany) count_node(n);
      else if (n == kMany)
        for (NodeId inlined : nodes.nodes(loc)) count_node(inlined);
    }
    if (have_leaf) {
      accumulate_saturating(sums.flat[leaf], w);
      accumulate_saturating(sums.flat_samples[leaf], filter.value(p, s, count));
    }
  }
  return sums;
}

ReportGraph build_report_graph(const core::Profile& p, const NodeIndex& nodes,
                               const LocationFilter& filter, size_t value,
                               const std::vector<uint8_t>* kept) {
  ReportGraph g;
  g.flat.assign(nodes.size(), 0);
  g.cum.assign(nodes.size(), 0);
  std::unordered_map<uint64_t, size_t> edge_of;
  // A stamp per node and per edge marks the last sample that counted it (sample index + 1).
  std::vector<uint64_t> node_stamp(nodes.size(), 0), edge_stamp;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    if (p.values(s)[value] == 0) continue;
    const auto stack = p.stack(s);
    if (!filter.keeps(s, stack)) continue;
    const int64_t w = filter.value(p, s, value);
    bool have_parent = false, residual = false;
    NodeId parent = 0;
    // From the root (outermost frame) to the leaf.
    for (size_t i = stack.size(); i-- > 0;) {
      const auto ns = nodes.nodes(stack[i]);
      for (size_t k = ns.size(); k-- > 0;) {
        const NodeId n = ns[k];
        if (kept != nullptr && !(*kept)[n]) {
          residual = true;
          continue;
        }
        if (node_stamp[n] != s + 1) {
          node_stamp[n] = s + 1;
          accumulate_saturating(g.cum[n], w);
        }
        if (have_parent && n != parent) {
          const bool is_inline = k + 1 != ns.size();
          const uint64_t key = (uint64_t(parent) << 32) | n;
          auto [it, fresh] = edge_of.try_emplace(key, g.edges.size());
          if (fresh) {
            g.edges.push_back({.caller = parent, .callee = n, .weight = 0, .inline_call = is_inline,
                             .residual = false});
            edge_stamp.push_back(0);
          }
          if (edge_stamp[it->second] != s + 1) {
            edge_stamp[it->second] = s + 1;
            GraphEdge& e = g.edges[it->second];
            accumulate_saturating(e.weight, w);
            if (residual) e.residual = true;
            if (!is_inline) e.inline_call = false;
          }
        }
        have_parent = true;
        parent = n;
        residual = false;
      }
    }
    if (have_parent && !residual) accumulate_saturating(g.flat[parent], w);
  }
  return g;
}

}  // namespace tally::analyze
