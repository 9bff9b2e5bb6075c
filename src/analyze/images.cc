#include "analyze/images.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/top.h"
#include "analyze/units.h"
#include "core/checked_math.h"

namespace tally::analyze {

core::Expected<ImageReport> compute_images(const core::Profile& p, const std::string& sample_index) {
  auto value = report_value_index(p, sample_index);
  if (!value) return value.error();
  const int samples_index = p.sample_type_index("samples");
  const size_t count = samples_index >= 0 ? static_cast<size_t>(samples_index) : *value;
  ImageReport report;
  report.value_type = std::string(p.str(p.sample_types[*value].type));
  report.value_unit = std::string(p.str(p.sample_types[*value].unit));
  std::map<std::string, ImageRow, std::less<>> by_name;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    auto stack = p.stack(s);
    // A sample of another event (0 in this value) is not one of this value's samples.
    const int64_t v = p.values(s)[*value], n = v == 0 ? 0 : p.values(s)[count];
    report.total = core::add_saturating(report.total, v);
    report.total_samples = core::add_saturating(report.total_samples, n);
    if (stack.empty()) continue;
    const core::MappingId m = p.location(stack[0]).mapping;
    std::string_view name = m == 0 ? std::string_view() : p.str(p.mapping(m).file);
    if (name.empty()) name = "[unknown]";
    auto it = by_name.find(name);
    if (it == by_name.end()) it = by_name.emplace(std::string(name), ImageRow{std::string(name), 0, 0}).first;
    it->second.value = core::add_saturating(it->second.value, v);
    it->second.samples = core::add_saturating(it->second.samples, n);
  }
  for (auto& [name, row] : by_name)
    if (row.value != 0 || row.samples != 0) report.rows.push_back(std::move(row));
  std::stable_sort(report.rows.begin(), report.rows.end(), [](const ImageRow& a, const ImageRow& b) {
    return a.value > b.value;
  });
  return report;
}

std::string format_images(const ImageReport& r) {
  int64_t min_value = 0;
  for (const ImageRow& row : r.rows)
    if (row.value != 0 && (min_value == 0 || core::abs_saturating(row.value) < min_value))
      min_value = core::abs_saturating(row.value);
  const std::string unit = select_output_unit(min_value, r.total, r.value_unit);
  std::string out = fmt::format("{:>10} {:>7} {:>7} {:>10}  image\n", "samples", "%", "cum%",
                                r.value_type);
  int64_t cum = 0;
  for (const ImageRow& row : r.rows) {
    cum = core::add_saturating(cum, row.value);
    out += fmt::format("{:>10} {:>7} {:>7} {:>10}  {}\n", row.samples, percentage(row.value, r.total),
                       percentage(cum, r.total), scaled_label(row.value, r.value_unit, unit), row.name);
  }
  out += fmt::format("{:>10} {:>7} {:>7} {:>10}  total\n", r.total_samples, percentage(r.total, r.total),
                     "", scaled_label(r.total, r.value_unit, unit));
  return out;
}

}  // namespace tally::analyze
