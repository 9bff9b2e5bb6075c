#include "analyze/node_report.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "analyze/units.h"
#include "core/checked_math.h"
#include "core/path_name.h"

namespace tally::analyze {

namespace {

using core::abs_saturating;
using core::accumulate_saturating;

// The profiled command of a call-graph profile (callgrind's "cmd:"), else "".
std::string_view call_graph_command(const core::Profile& p) {
  if (!p.call_graph.present || p.call_graph.parts.empty()) return {};
  for (const auto& [key, text] : p.call_graph.parts.front().header)
    if (key == "cmd") return text;
  return {};
}

TopReport report_header(const core::Profile& p, size_t value, size_t count,
                        const NameFilters& filters) {
  TopReport report;
  report.call_graph = p.call_graph.present;
  const std::string_view command = call_graph_command(p);
  if (!command.empty()) {
    report.file = std::string(core::base_name(command.substr(0, command.find(' '))));
  } else if (!p.mappings.empty()) {
    report.file = std::string(core::base_name(p.str(p.mappings[0].file)));
    report.build_id = std::string(p.str(p.mappings[0].build_id));
  }
  for (core::StringId c : p.comments)
    if (!p.str(c).starts_with('#')) report.comments.emplace_back(p.str(c));
  report.sample_type = std::string(p.str(p.sample_types[value].type));
  report.sample_unit = std::string(p.str(p.sample_types[value].unit));
  report.time_nanos = p.time_nanos;
  report.duration_nanos = p.duration_nanos;
  report.active_filters = filters.active();

  // The total is taken before filtering, as pprof does without -relative_percentages.
  // The samples the ± interval counts are those of this value: in a profile of several
  // events, a sample of another event (0 here) is no trial of this one.
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const int64_t v = p.values(s)[value];
    accumulate_saturating(report.total, abs_saturating(v));
    if (v != 0) accumulate_saturating(report.total_samples, abs_saturating(p.values(s)[count]));
  }
  return report;
}

}  // namespace

core::Expected<NodeReportBasis> node_report_basis(const core::Profile& p,
                                                  const NodeOptions& node_options,
                                                  const NameFilters& filters,
                                                  const std::string& sample_index) {
  auto value = report_value_index(p, sample_index);
  if (!value) return value.error();
  const int samples_index = p.sample_type_index("samples");
  const size_t count = samples_index >= 0 ? static_cast<size_t>(samples_index) : *value;
  if (p.call_graph.present && filters.any())
    return core::Error{"--focus, --ignore, --hide, --show and the label filters work on stack "
                       "profiles; this is a call-graph profile (callgrind)",
                       core::ErrorKind::unsupported};
  TopReport header = report_header(p, *value, count, filters);
  auto filter = LocationFilter::create(p, filters);
  if (!filter) return filter.error();
  for (const std::string& f : filter->unmatched())
    header.warnings.push_back("no frame matches the --" + f + " regex");
  for (std::string& w : filter->label_warnings()) header.warnings.push_back(std::move(w));
  // The index takes from the filter only the lines hide/show keep; it holds no pointer to it.
  NodeIndex nodes(p, node_options, &*filter);
  return NodeReportBasis{.value = *value,
                         .count = count,
                         .header = std::move(header),
                         .filter = std::move(*filter),
                         .nodes = std::move(nodes)};
}

int64_t fraction_cutoff(int64_t total, double fraction) {
  return abs_saturating(core::to_int64_saturating(static_cast<double>(total) * fraction));
}

TrimmedNodes trim_nodes(const NodeIndex& index, std::span<const int64_t> flat,
                        std::span<const int64_t> cum, const TrimOptions& options) {
  std::vector<NodeId> present;
  int64_t graph_total = 0;
  for (NodeId n = 0; n < index.size(); ++n) {
    if (flat[n] == 0 && cum[n] == 0) continue;
    present.push_back(n);
    accumulate_saturating(graph_total, flat[n]);
  }
  const int64_t cutoff = fraction_cutoff(graph_total, options.node_fraction);
  std::vector<NodeId> kept;
  for (NodeId n : present)
    if (abs_saturating(cum[n]) >= cutoff) kept.push_back(n);

  TrimmedNodes trimmed;
  trimmed.dropped = present.size() - kept.size();
  trimmed.before_count = kept.size();
  // Names for the kept nodes only: a profile may have 100k nodes, the report a few hundred.
  std::vector<std::string> names(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) names[i] = index.name(kept[i]);

  const auto& first = options.sort_by_cum ? cum : flat;
  const auto& second = options.sort_by_cum ? flat : cum;
  std::vector<size_t> order(kept.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t i, size_t j) {
    const NodeId a = kept[i], b = kept[j];
    const int64_t first_a = abs_saturating(first[a]), first_b = abs_saturating(first[b]);
    if (first_a != first_b) return first_a > first_b;
    if (names[i] != names[j]) return names[i] < names[j];
    const int64_t second_a = abs_saturating(second[a]), second_b = abs_saturating(second[b]);
    if (second_a != second_b) return second_a > second_b;
    const NodeKey &x = index.key(a), &y = index.key(b);
    return std::tie(x.address, x.line, x.start_line, x.file, x.objfile) <
           std::tie(y.address, y.line, y.start_line, y.file, y.objfile);
  });
  if (options.node_count > 0 && order.size() > options.node_count)
    order.resize(options.node_count);
  trimmed.nodes.reserve(order.size());
  trimmed.names.reserve(order.size());
  for (size_t i : order) {
    trimmed.nodes.push_back(kept[i]);
    trimmed.names.push_back(std::move(names[i]));
  }
  return trimmed;
}

void set_shown_nodes(TopReport& report, const TrimmedNodes& trimmed, std::span<const int64_t> flat,
                     std::span<const int64_t> cum, std::span<const int64_t> flat_samples,
                     double node_fraction) {
  report.dropped_nodes = trimmed.dropped;
  report.drop_cutoff = fraction_cutoff(report.total, node_fraction);
  report.nodes_before_count = trimmed.before_count;
  int64_t min_value = 0;
  for (size_t i = 0; i < trimmed.nodes.size(); ++i) {
    const NodeId n = trimmed.nodes[i];
    report.rows.push_back({.name = trimmed.names[i],
                           .inline_label = "",
                           .flat = flat[n],
                           .cum = cum[n],
                           .flat_samples = flat_samples.empty() ? 0 : flat_samples[n]});
    accumulate_saturating(report.shown_flat, flat[n]);
    int64_t node_min = abs_saturating(flat[n]);
    if (node_min == 0) node_min = abs_saturating(cum[n]);
    if (node_min > 0 && (min_value == 0 || node_min < min_value)) min_value = node_min;
  }
  report.output_unit = report.rows.empty()
                           ? std::string("minimum")
                           : select_output_unit(min_value, report.total, report.sample_unit);
}

}  // namespace tally::analyze
