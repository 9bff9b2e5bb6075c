#include "analyze/top.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <unordered_map>

#include "analyze/report_graph.h"
#include "analyze/units.h"
#include "core/path_name.h"
#include "core/sample_counts.h"

namespace tally::analyze {

namespace {

int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

// The profiled command of a call-graph profile (callgrind's "cmd:"), else "".
std::string_view call_graph_command(const core::Profile& p) {
  if (!p.call_graph.present || p.call_graph.parts.empty()) return {};
  for (const auto& [key, text] : p.call_graph.parts.front().header)
    if (key == "cmd") return text;
  return {};
}

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
    self[u] += values[value];
    sums.flat[node_of_unit[u]] += values[value];
    sums.flat_samples[node_of_unit[u]] += values[count];
  }
  for (const core::CallEdge& e : p.call_graph.calls) {
    if (value >= e.inclusive.size()) continue;
    const size_t from = use(e.caller), to = use(e.callee);
    if (from == SIZE_MAX || to == SIZE_MAX) continue;
    calls_out[from] += e.inclusive[value];
    calls_in[to] += e.inclusive[value];
    called[to] = 1;
  }
  for (size_t u = 0; u < units; ++u)
    if (unit_used[u]) sums.cum[node_of_unit[u]] += called[u] ? calls_in[u] : self[u] + calls_out[u];
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
  std::unordered_map<uint64_t, bool> edge_inline;
  std::vector<uint64_t> seen;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    if (p.values(s)[value] == 0) continue;
    const auto stack = p.stack(s);
    if (!filter.keeps(stack)) continue;
    seen.clear();
    bool have_parent = false;
    NodeId parent = 0;
    for (size_t i = stack.size(); i-- > 0;) {
      const auto ns = nodes.nodes(stack[i]);
      for (size_t k = ns.size(); k-- > 0;) {
        const NodeId n = ns[k];
        if (!kept[n]) continue;
        if (have_parent && n != parent) {
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
  auto value = report_value_index(p, options.sample_index);
  if (!value) return value.error();
  const int samples_index = p.sample_type_index("samples");
  const size_t count = samples_index >= 0 ? static_cast<size_t>(samples_index) : *value;

  TopReport report;
  report.call_graph = p.call_graph.present;
  if (report.call_graph && options.filters.any())
    return core::Error{"--focus, --ignore, --hide and --show work on stack profiles; this is a "
                       "call-graph profile (callgrind)",
                       core::ErrorKind::unsupported};
  const std::string_view command = call_graph_command(p);
  if (!command.empty()) {
    report.file = std::string(core::base_name(command.substr(0, command.find(' '))));
  } else if (!p.mappings.empty()) {
    report.file = std::string(core::base_name(p.str(p.mappings[0].file)));
    report.build_id = std::string(p.str(p.mappings[0].build_id));
  }
  for (core::StringId c : p.comments)
    if (!p.str(c).starts_with('#')) report.comments.emplace_back(p.str(c));
  report.sample_type = std::string(p.str(p.sample_types[*value].type));
  report.sample_unit = std::string(p.str(p.sample_types[*value].unit));
  report.time_nanos = p.time_nanos;
  report.duration_nanos = p.duration_nanos;
  report.active_filters = options.filters.active();

  // The total is taken before filtering, as pprof does without -relative_percentages.
  // The samples the ± interval counts are those of this value: in a profile of several
  // events, a sample of another event (0 here) is no trial of this one.
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const int64_t v = p.values(s)[*value];
    report.total += abs64(v);
    if (v != 0) report.total_samples += abs64(p.values(s)[count]);
  }

  auto filter = LocationFilter::create(p, options.filters);
  if (!filter) return filter.error();
  for (const std::string& f : filter->unmatched())
    report.warnings.push_back("no frame matches the --" + f + " regex");
  const NodeIndex nodes(p, options.nodes, &*filter);
  // Made once (not a zeroed set replaced by sum_nodes' own): these are the peak's.
  NodeSums sums = report.call_graph ? NodeSums(nodes.size())
                                    : sum_nodes(p, nodes, *filter, *value, count);
  if (report.call_graph) sum_call_graph(p, nodes, options.nodes.granularity, *value, count, sums);

  // Drop nodes whose cum is under node_fraction of the graph's flat sum.
  std::vector<NodeId> present;
  int64_t graph_total = 0;
  for (NodeId n = 0; n < nodes.size(); ++n) {
    if (sums.flat[n] == 0 && sums.cum[n] == 0) continue;
    present.push_back(n);
    graph_total += sums.flat[n];
  }
  const int64_t cutoff =
      abs64(static_cast<int64_t>(static_cast<double>(graph_total) * options.node_fraction));
  std::vector<NodeId> kept;
  for (NodeId n : present)
    if (abs64(sums.cum[n]) >= cutoff) kept.push_back(n);
  report.dropped_nodes = present.size() - kept.size();
  report.drop_cutoff =
      abs64(static_cast<int64_t>(static_cast<double>(report.total) * options.node_fraction));
  report.nodes_before_count = kept.size();

  // Names for the kept nodes only: a profile may have 100k nodes, the report a few hundred.
  std::vector<uint32_t> name_slot(nodes.size(), 0);
  std::vector<std::string> kept_names(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    name_slot[kept[i]] = static_cast<uint32_t>(i);
    kept_names[i] = nodes.name(kept[i]);
  }
  auto name = [&](NodeId n) -> const std::string& { return kept_names[name_slot[n]]; };
  auto by_key = [&](NodeId a, NodeId b) {
    const NodeKey &x = nodes.key(a), &y = nodes.key(b);
    return std::tie(x.address, x.line, x.start_line, x.file, x.objfile) <
           std::tie(y.address, y.line, y.start_line, y.file, y.objfile);
  };
  auto flat_order = [&](NodeId a, NodeId b) {
    if (abs64(sums.flat[a]) != abs64(sums.flat[b])) return abs64(sums.flat[a]) > abs64(sums.flat[b]);
    if (name(a) != name(b)) return name(a) < name(b);
    if (abs64(sums.cum[a]) != abs64(sums.cum[b])) return abs64(sums.cum[a]) > abs64(sums.cum[b]);
    return by_key(a, b);
  };
  auto cum_order = [&](NodeId a, NodeId b) {
    if (abs64(sums.cum[a]) != abs64(sums.cum[b])) return abs64(sums.cum[a]) > abs64(sums.cum[b]);
    if (name(a) != name(b)) return name(a) < name(b);
    if (abs64(sums.flat[a]) != abs64(sums.flat[b])) return abs64(sums.flat[a]) > abs64(sums.flat[b]);
    return by_key(a, b);
  };
  if (options.sort_by_cum) std::sort(kept.begin(), kept.end(), cum_order);
  else std::sort(kept.begin(), kept.end(), flat_order);
  if (options.node_count > 0 && kept.size() > options.node_count) kept.resize(options.node_count);

  std::vector<uint8_t> is_kept(nodes.size(), 0);
  for (NodeId n : kept) is_kept[n] = 1;
  const std::vector<uint8_t> edges_in =
      report.call_graph ? std::vector<uint8_t>(nodes.size(), 0)
                        : inline_edges(p, nodes, *filter, *value, is_kept);

  int64_t min_value = 0;
  for (NodeId n : kept) {
    report.rows.push_back({.name = name(n),
                           .inline_label = inline_label(edges_in[n]),
                           .flat = sums.flat[n],
                           .cum = sums.cum[n],
                           .flat_samples = sums.flat_samples[n]});
    report.shown_flat += sums.flat[n];
    int64_t node_min = abs64(sums.flat[n]);
    if (node_min == 0) node_min = abs64(sums.cum[n]);
    if (node_min > 0 && (min_value == 0 || node_min < min_value)) min_value = node_min;
  }
  report.output_unit = report.rows.empty()
                           ? std::string("minimum")
                           : select_output_unit(min_value, report.total, report.sample_unit);
  return report;
}

}  // namespace tally::analyze
