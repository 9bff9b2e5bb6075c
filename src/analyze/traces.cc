#include "analyze/traces.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "analyze/node_report.h"
#include "analyze/top_text.h"
#include "analyze/units.h"

namespace tally::analyze {

namespace {

const char* kSeparator = "-----------+-------------------------------------------------------";

// pprof's unit per numeric label key (its NumLabelUnits): the first unit a sample gives
// for the key; with none, "bytes" for "alignment" and "request", else the key itself.
std::unordered_map<core::StringId, std::string> numeric_label_units(const core::Profile& p) {
  std::unordered_map<core::StringId, std::string> units;
  for (size_t s = 0; s < p.sample_count(); ++s)
    for (const core::Label& l : p.labels(s)) {
      if (l.str != 0) continue;
      auto [it, fresh] = units.try_emplace(l.key);
      if (it->second.empty() && l.num_unit != 0) it->second = p.str(l.num_unit);
    }
  for (auto& [key, unit] : units) {
    if (!unit.empty()) continue;
    const std::string_view name = p.str(key);
    unit = name == "alignment" || name == "request" ? "bytes" : std::string(name);
  }
  return units;
}

// One sample's label lines as pprof prints them: "%10s:  v1 v2" per key, the string
// keys' lines sorted, then the numeric keys' lines sorted.
std::vector<std::string> label_lines(
    const core::Profile& p, std::span<const core::Label> labels,
    const std::unordered_map<core::StringId, std::string>& units) {
  std::vector<std::pair<core::StringId, std::string>> text, numeric;  // key, values
  auto add = [](auto& group, core::StringId key, std::string_view value) {
    auto it = std::find_if(group.begin(), group.end(), [&](const auto& g) { return g.first == key; });
    if (it == group.end()) {
      group.emplace_back(key, std::string(value));
    } else {
      it->second += ' ';
      it->second += value;
    }
  };
  for (const core::Label& l : labels) {
    if (l.str != 0) add(text, l.key, p.str(l.str));
    else add(numeric, l.key, scaled_label(l.num, units.at(l.key), "auto"));
  }
  std::vector<std::string> lines;
  for (auto* group : {&text, &numeric}) {
    const size_t first = lines.size();
    for (const auto& [key, values] : *group)
      lines.push_back(fmt::format("{:>10}:  {}", p.str(key), values));
    std::sort(lines.begin() + static_cast<std::ptrdiff_t>(first), lines.end());
  }
  return lines;
}

}  // namespace

core::Expected<TracesReport> compute_traces(const core::Profile& p, const TracesOptions& options) {
  if (p.call_graph.present)
    return core::Error{"traces needs stack samples; this is a call-graph profile (callgrind), "
                       "which has no stacks",
                       core::ErrorKind::unsupported};
  auto basis = node_report_basis(p, options.nodes, options.filters, options.sample_index);
  if (!basis) return basis.error();
  // top's header without its filters and graph lines; values in pprof's "minimum" unit
  // (traces pick no common output unit).
  TopReport summary = std::move(basis->header);
  summary.active_filters.clear();
  summary.output_unit = "minimum";
  TracesReport report;
  report.header = top_header(summary);
  report.header.pop_back();  // "Showing nodes accounting for ..."
  report.sample_unit = summary.sample_unit;

  const size_t value = basis->value;
  const LocationFilter& filter = basis->filter;
  const NodeIndex& nodes = basis->nodes;
  std::vector<std::string> names(nodes.size());
  std::vector<uint8_t> named(nodes.size(), 0);
  const auto label_units = numeric_label_units(p);
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const auto stack = p.stack(s);
    if (!filter.keeps(s, stack)) continue;
    Trace trace;
    trace.value = filter.value(p, s, value);
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
    if (trace.frames.empty()) continue;
    trace.labels = label_lines(p, p.labels(s), label_units);
    report.traces.push_back(std::move(trace));
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
    for (const std::string& line : t.labels) {
      out += line;
      out += '\n';
    }
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
