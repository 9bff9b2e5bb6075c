#include "cli/summary.h"

#include <fmt/format.h>

#include <vector>

namespace tally::cli {

void print_summary(const core::Profile& p, const std::string& name, formats::Format format,
                   bool gzipped) {
  fmt::print("{:<16}{}\n", "file", name);
  fmt::print("{:<16}{} ({}{})\n", "format", formats::format_name(format),
             formats::format_description(format), gzipped ? ", gzip-compressed" : "");
  for (size_t i = 0; i < p.sample_types.size(); ++i)
    fmt::print("{:<16}{} {}\n", "total " + std::string(p.str(p.sample_types[i].type)), p.total(i),
               p.str(p.sample_types[i].unit));
  fmt::print("{:<16}{} {}/{}\n", "period", p.period, p.str(p.period_type.type),
             p.str(p.period_type.unit));
  size_t max_depth = 0, frames = 0;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    max_depth = std::max(max_depth, p.stack(s).size());
    frames += p.stack(s).size();
  }
  fmt::print("{:<16}{}\n", "distinct stacks", p.sample_count());
  fmt::print("{:<16}{}\n", "max depth", max_depth);
  fmt::print("{:<16}{}\n", "locations", p.locations.size());
  fmt::print("{:<16}{}\n", "functions", p.functions.size());
  std::vector<bool> used(p.mappings.size() + 1, false);
  for (const auto& l : p.locations) used[l.mapping] = true;
  size_t used_count = 0;
  for (size_t m = 1; m < used.size(); ++m) used_count += used[m];
  fmt::print("{:<16}{} ({} with samples)\n", "mappings", p.mappings.size(), used_count);
  if (p.time_nanos != 0) fmt::print("{:<16}{}\n", "time (ns)", p.time_nanos);
  if (p.duration_nanos != 0) fmt::print("{:<16}{}\n", "duration (ns)", p.duration_nanos);
  for (const auto& [k, v] : p.attributes) fmt::print("{:<16}{}\n", k, v);
  (void)frames;
}

}  // namespace tally::cli
