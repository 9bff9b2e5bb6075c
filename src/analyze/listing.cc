#include "analyze/listing.h"

#include <fmt/format.h>

#include "analyze/top.h"
#include "analyze/units.h"
#include "core/checked_math.h"

namespace tally::analyze {

core::Expected<ListingBasis> listing_basis(const core::Profile& p, const std::string& regex,
                                           const NameFilters& filters,
                                           const std::string& sample_index) {
  auto pattern = compile_report_regex(regex);
  if (!pattern) return pattern.error();
  if (p.call_graph.present && filters.any())
    return core::Error{"--focus, --ignore, --hide, --show and the label filters work on stack "
                       "profiles; this is a call-graph profile (callgrind)",
                       core::ErrorKind::unsupported};
  auto value = report_value_index(p, sample_index);
  if (!value) return value.error();
  auto filter = LocationFilter::create(p, filters);
  if (!filter) return filter.error();
  ListingBasis basis{.pattern = std::move(*pattern),
                     .value = *value,
                     .sample_unit = std::string(p.str(p.sample_types[*value].unit)),
                     .total = 0,
                     .filter = std::move(*filter),
                     .warnings = {}};
  for (size_t s = 0; s < p.sample_count(); ++s)
    core::accumulate_saturating(basis.total, core::abs_saturating(p.values(s)[*value]));
  for (const std::string& f : basis.filter.unmatched())
    basis.warnings.push_back("no frame matches the --" + f + " regex");
  for (std::string& w : basis.filter.label_warnings()) basis.warnings.push_back(std::move(w));
  return basis;
}

std::string ListingValues::operator()(int64_t value) const {
  return scaled_label(value, unit, "minimum");
}

std::string ListingValues::or_dot(int64_t value) const {
  return value == 0 ? std::string(".") : (*this)(value);
}

std::string ListingValues::routine_totals(int64_t flat, int64_t cum, int64_t total) const {
  return fmt::format("{:>10} {:>10} (flat, cum) {} of Total\n", (*this)(flat), (*this)(cum),
                     percentage(cum, total));
}

NodeSums sum_positions(const core::Profile& p, const NodeIndex& nodes, const LocationFilter& filter,
                       size_t value) {
  NodeSums sums = sum_nodes(p, nodes, filter, value, value);
  if (!p.call_graph.present) return sums;
  for (const core::CallEdge& e : p.call_graph.calls) {
    if (value >= e.inclusive.size()) continue;
    const auto ns = nodes.nodes(e.caller);
    if (!ns.empty()) core::accumulate_saturating(sums.cum[ns.front()], e.inclusive[value]);
  }
  return sums;
}

}  // namespace tally::analyze
