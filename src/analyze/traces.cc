#include "analyze/traces.h"

#include <fmt/format.h>

#include "analyze/top.h"
#include "analyze/top_text.h"
#include "analyze/units.h"

namespace tally::analyze {

namespace {

const char* kSeparator = "-----------+-------------------------------------------------------";

}  // namespace

core::Expected<TracesReport> compute_traces(const core::Profile& p, const TracesOptions& options) {
  if (p.call_graph.present)
    return core::Error{"traces needs stack samples; this is a call-graph profile (callgrind), "
                       "which has no stacks",
                       core::ErrorKind::unsupported};
  // top's header without its graph lines; values in pprof's "minimum" unit (traces
  // pick no common output unit).
  TopOptions top;
  top.nodes = options.nodes;
  top.filters = options.filters;
  top.sample_index = options.sample_index;
  auto summary = compute_top(p, top);
  if (!summary) return summary.error();
  summary->active_filters.clear();
  summary->dropped_nodes = 0;
  summary->rows.clear();
  summary->output_unit = "minimum";
  TracesReport report;
  report.header = top_header(*summary);
  report.header.pop_back();  // "Showing nodes accounting for ..."
  report.sample_unit = summary->sample_unit;

  auto value = report_value_index(p, options.sample_index);
  if (!value) return value.error();
  auto filter = LocationFilter::create(p, options.filters);
  if (!filter) return filter.error();
  const NodeIndex nodes(p, options.nodes, &*filter);
  std::vector<std::string> names(nodes.size());
  std::vector<uint8_t> named(nodes.size(), 0);
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const auto stack = p.stack(s);
    if (!filter->keeps(stack)) continue;
    Trace trace;
    trace.value = p.values(s)[*value];
    for (core::LocationId loc : stack) {
      const auto ns = nodes.nodes(loc);
      for (size_t k = 0; k < ns.size(); ++k) {
        const NodeId n = ns[k];
        if (!named[n]) {
          named[n] = 1;
          names[n] = nodes.name(n);
        }
        trace.frames.push_back({.name = names[n], .inline_frame = k + 1 != ns.size()});
      }
    }
    if (!trace.frames.empty()) report.traces.push_back(std::move(trace));
  }
  return report;
}

std::string format_traces(const TracesReport& r) {
  std::string out;
  for (const std::string& line : r.header) {
    out += line;
    out += '\n';
  }
  for (const Trace& t : r.traces) {
    out += kSeparator;
    out += '\n';
    for (size_t i = 0; i < t.frames.size(); ++i) {
      const std::string value =
          i == 0 ? scaled_label(t.value, r.sample_unit, "minimum") : std::string();
      fmt::format_to(std::back_inserter(out), "{:>10}   {}{}\n", value, t.frames[i].name,
                     t.frames[i].inline_frame ? " (inline)" : "");
    }
  }
  out += kSeparator;
  out += '\n';
  return out;
}

}  // namespace tally::analyze
