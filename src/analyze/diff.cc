#include "analyze/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include "analyze/units.h"
#include "core/checked_math.h"

namespace tally::analyze {

namespace {

using core::accumulate_saturating;

double share(int64_t part, int64_t total) {
  return total > 0 ? static_cast<double>(part) / static_cast<double>(total) : 0.0;
}

}  // namespace

ZTest two_proportion_z_test(int64_t k1, int64_t n1, int64_t k2, int64_t n2) {
  if (n1 <= 0 || n2 <= 0) return {};
  const double p1 = share(k1, n1), p2 = share(k2, n2);
  // In doubles: two counts near the int64 limit have a sum beyond it.
  const double pooled = (static_cast<double>(k1) + static_cast<double>(k2)) /
                        (static_cast<double>(n1) + static_cast<double>(n2));
  const double se = std::sqrt(pooled * (1 - pooled) *
                              (1.0 / static_cast<double>(n1) + 1.0 / static_cast<double>(n2)));
  if (!(se > 0)) return {};
  const double z = (p2 - p1) / se;
  return {z, std::erfc(std::fabs(z) / std::sqrt(2.0))};
}

core::Expected<DiffReport> compute_diff(const core::Profile& base, const core::Profile& next,
                                        const DiffOptions& options) {
  TopOptions top = options.top;
  top.node_count = 0;
  top.node_fraction = 0;  // every node: a function may appear in only one profile
  auto a = compute_top(base, top);
  if (!a) return a.error();
  auto b = compute_top(next, top);
  if (!b) return b.error();
  if (a->sample_type != b->sample_type || a->sample_unit != b->sample_unit)
    return core::Error{"the profiles measure different things: " + a->sample_type + "/" +
                           a->sample_unit + " and " + b->sample_type + "/" + b->sample_unit +
                           "; pick one with --sample-index",
                       core::ErrorKind::unsupported};

  DiffReport report;
  report.base_total = a->total;
  report.new_total = b->total;
  report.base_samples = a->total_samples;
  report.new_samples = b->total_samples;
  report.sample_type = a->sample_type;
  report.sample_unit = a->sample_unit;
  report.significance = options.significance;
  for (const std::string& w : a->warnings) report.warnings.push_back("base: " + w);
  for (const std::string& w : b->warnings) report.warnings.push_back("new: " + w);
  const bool tested = !a->call_graph && !b->call_graph;

  std::map<std::string, DiffRow> by_name;  // ordered: ties sort by name
  for (const TopRow& r : a->rows) {
    DiffRow& d = by_name[r.name];
    accumulate_saturating(d.base_flat, r.flat);
    accumulate_saturating(d.base_cum, r.cum);
    accumulate_saturating(d.base_flat_samples, r.flat_samples);
  }
  for (const TopRow& r : b->rows) {
    DiffRow& d = by_name[r.name];
    accumulate_saturating(d.new_flat, r.flat);
    accumulate_saturating(d.new_cum, r.cum);
    accumulate_saturating(d.new_flat_samples, r.flat_samples);
  }
  for (auto& [name, d] : by_name) {
    d.name = name;
    d.base_flat_share = share(d.base_flat, report.base_total);
    d.new_flat_share = share(d.new_flat, report.new_total);
    d.base_cum_share = share(d.base_cum, report.base_total);
    d.new_cum_share = share(d.new_cum, report.new_total);
    d.tested = tested;
    if (tested) {
      d.test = two_proportion_z_test(d.base_flat_samples, report.base_samples,
                                     d.new_flat_samples, report.new_samples);
      d.significant = d.test.p < options.significance;
      if (d.significant) ++report.significant;
    }
    report.rows.push_back(std::move(d));
  }
  std::stable_sort(report.rows.begin(), report.rows.end(), [](const DiffRow& x, const DiffRow& y) {
    const double fx = std::fabs(x.flat_change()), fy = std::fabs(y.flat_change());
    if (fx != fy) return fx > fy;
    return std::fabs(x.cum_change()) > std::fabs(y.cum_change());
  });
  if (options.node_count > 0 && report.rows.size() > options.node_count) {
    report.dropped = report.rows.size() - options.node_count;
    report.rows.resize(options.node_count);
  }
  return report;
}

std::string format_diff(const DiffReport& r) {
  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w, "Type: {}\n", r.sample_type);
  fmt::format_to(w, "Base: total {} in {} samples\n",
                 scaled_label(r.base_total, r.sample_unit, "auto"), r.base_samples);
  fmt::format_to(w, "New:  total {} in {} samples\n",
                 scaled_label(r.new_total, r.sample_unit, "auto"), r.new_samples);
  const bool tested = !r.rows.empty() && r.rows.front().tested;
  if (tested)
    fmt::format_to(w,
                   "{} of {} changes in flat% are significant (two-proportion z-test, p < {}), "
                   "marked *\n",
                   r.significant, r.rows.size() + r.dropped, r.significance);
  else
    out += "Call-graph profiles: the costs are exact counts, no significance test\n";
  if (r.dropped > 0) fmt::format_to(w, "Dropped {} nodes (--nodecount)\n", r.dropped);
  fmt::format_to(w, "{:>8} {:>8} {:>9} {:>8} {:>8} {:>9} {:>7} {:>9}   {}\n", "base%", "new%",
                 "Δflat", "basecum%", "newcum%", "Δcum", "z", "p", "name");
  auto pct = [](double f) { return fmt::format("{:.2f}%", 100 * f); };
  auto delta = [](double f) { return fmt::format("{:+.2f}pp", 100 * f); };
  for (const DiffRow& d : r.rows) {
    std::string z = "-", p = "-";
    if (d.tested) {
      z = fmt::format("{:.2f}", d.test.z);
      p = d.test.p < 0.0001 ? "<0.0001" : fmt::format("{:.4f}", d.test.p);
    }
    fmt::format_to(w, "{:>8} {:>8} {:>9} {:>8} {:>8} {:>9} {:>7} {:>9} {} {}\n",
                   pct(d.base_flat_share), pct(d.new_flat_share), delta(d.flat_change()),
                   pct(d.base_cum_share), pct(d.new_cum_share), delta(d.cum_change()), z, p,
                   d.significant ? "*" : " ", d.name);
  }
  return out;
}

}  // namespace tally::analyze
