#include "cli/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tally::cli {

void print_summary(const core::Profile& p, const std::string& name, formats::Format format,
                   bool gzipped, const core::PositionCounts& positions) {
  struct Row {
    std::string key, value;
  };
  std::vector<Row> rows;
  rows.reserve(16 + p.sample_types.size());
  rows.push_back({"file", name});
  rows.push_back({"format", fmt::format("{} ({}{})", formats::format_name(format),
                                          formats::format_description(format),
                                          gzipped ? ", gzip-compressed" : "")});
  for (size_t i = 0; i < p.sample_types.size(); ++i)
    rows.push_back({"total " + std::string(p.str(p.sample_types[i].type)),
                      fmt::format("{} {}", p.total(i), p.str(p.sample_types[i].unit))});
  rows.push_back({"period", fmt::format("{} {}/{}", p.period, p.str(p.period_type.type),
                                          p.str(p.period_type.unit))});
  size_t max_depth = 0;
  for (size_t s = 0; s < p.sample_count(); ++s) max_depth = std::max(max_depth, p.stack(s).size());
  rows.push_back({"distinct stacks",
                  std::to_string(positions.counted ? positions.samples : p.sample_count())});
  rows.push_back({"max depth", std::to_string(max_depth)});
  rows.push_back({"locations",
                  std::to_string(positions.counted ? positions.locations : p.locations.size())});
  rows.push_back({"functions", std::to_string(p.functions.size())});
  std::vector<bool> used(p.mappings.size() + 1, false);
  for (const auto& l : p.locations) used[l.mapping] = true;
  size_t used_count = 0;
  for (size_t m = 1; m < used.size(); ++m) used_count += used[m];
  rows.push_back({"mappings", fmt::format("{} ({} with samples)", p.mappings.size(), used_count)});
  if (p.call_graph.present) {
    rows.push_back({"call edges", std::to_string(positions.counted ? positions.calls
                                                                    : p.call_graph.calls.size())});
    rows.push_back({"jumps", std::to_string(positions.counted ? positions.jumps
                                                              : p.call_graph.jumps.size())});
    rows.push_back({"parts", std::to_string(p.call_graph.parts.size())});
  }
  if (p.time_nanos != 0) rows.push_back({"time (ns)", std::to_string(p.time_nanos)});
  if (p.duration_nanos != 0) rows.push_back({"duration (ns)", std::to_string(p.duration_nanos)});
  // One column for the values: 16 wide, wider when a name (a long sample type) needs it,
  // so that a name never runs into its value. A format's header data follow in the same
  // column, a longer name one space before its value.
  size_t width = 16;
  for (const auto& [key, value] : rows) width = std::max(width, key.size() + 1);
  for (const auto& [key, value] : rows) fmt::print("{:<{}}{}\n", key, width, value);
  for (const auto& [key, value] : p.attributes) fmt::print("{:<{}} {}\n", key, width - 1, value);
}

namespace {

std::string label_text(const core::Profile& p, const core::Label& l) {
  if (l.str != 0) return fmt::format("{}={}", p.str(l.key), p.str(l.str));
  if (l.num_unit != 0) return fmt::format("{}={}{}", p.str(l.key), l.num, p.str(l.num_unit));
  return fmt::format("{}={}", p.str(l.key), l.num);
}

// The call-graph shape (callgrind): parts, events beyond their names, edges, jumps.
void print_call_graph(const core::Profile& p, std::string& out) {
  const core::CallGraph& g = p.call_graph;
  if (!g.present) return;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "call graph: positions{}{}\n", g.has_instr ? " instr" : "", g.has_line ? " line" : "");
  for (size_t i = 0; i < g.parts.size(); ++i) {
    fmt::format_to(it, "part {}:", i + 1);
    for (const auto& [k, v] : g.parts[i].header) fmt::format_to(it, " {}={}", k, v);
    fmt::format_to(it, "\n");
  }
  for (size_t i = 0; i < g.events.size() && i < p.sample_types.size(); ++i) {
    const core::EventInfo& e = g.events[i];
    if (e.long_name == 0 && e.formula.empty()) continue;
    fmt::format_to(it, "event {}: {}{}{}\n", p.str(p.sample_types[i].type), p.str(e.long_name),
                   e.formula.empty() ? "" : " = ", e.formula);
  }
  for (const core::CallEdge& e : g.calls) {
    fmt::format_to(it, "call {} -> {} part {} count {}:", e.caller, e.callee, e.part + 1, e.count);
    for (int64_t v : e.inclusive) fmt::format_to(it, " {}", v);
    fmt::format_to(it, "\n");
    if (out.size() > (1 << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  for (const core::Jump& j : g.jumps)
    fmt::format_to(it, "{} {} -> {} part {} executed {} followed {}\n",
                   j.conditional ? "jcnd" : "jump", j.from, j.to, j.part + 1, j.executed, j.followed);
  for (const core::InlinedFile& f : g.inlined_files)
    fmt::format_to(it, "inlined {} {} {} in {}\n", f.object, f.function, f.file, f.home);
}

}  // namespace

void print_profile(const core::Profile& p, const std::string& name, formats::Format format) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "# {}: {}\n", name, formats::format_description(format));
  for (core::StringId c : p.comments) fmt::format_to(it, "comment {}\n", p.str(c));
  fmt::format_to(it, "period {} {}/{}\n", p.period, p.str(p.period_type.type),
                 p.str(p.period_type.unit));
  if (p.time_nanos) fmt::format_to(it, "time_nanos {}\n", p.time_nanos);
  if (p.duration_nanos) fmt::format_to(it, "duration_nanos {}\n", p.duration_nanos);
  if (p.drop_frames) fmt::format_to(it, "drop_frames {}\n", p.str(p.drop_frames));
  if (p.keep_frames) fmt::format_to(it, "keep_frames {}\n", p.str(p.keep_frames));
  if (p.default_sample_type) fmt::format_to(it, "default_sample_type {}\n", p.str(p.default_sample_type));
  if (p.doc_url) fmt::format_to(it, "doc_url {}\n", p.str(p.doc_url));
  for (const auto& [k, v] : p.attributes) fmt::format_to(it, "attribute {} {}\n", k, v);
  fmt::format_to(it, "samples");
  for (const auto& t : p.sample_types) fmt::format_to(it, " {}/{}", p.str(t.type), p.str(t.unit));
  fmt::format_to(it, "\n");
  for (size_t s = 0; s < p.sample_count(); ++s) {
    fmt::format_to(it, "sample {}:", s + 1);
    for (int64_t v : p.values(s)) fmt::format_to(it, " {}", v);
    fmt::format_to(it, " @");
    for (core::LocationId id : p.stack(s)) fmt::format_to(it, " {}", id);
    for (const core::Label& l : p.labels(s)) fmt::format_to(it, " {}", label_text(p, l));
    fmt::format_to(it, "\n");
    if (out.size() > (1 << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  for (size_t i = 0; i < p.locations.size(); ++i) {
    const core::Location& l = p.locations[i];
    fmt::format_to(it, "location {}: 0x{:x} mapping {}{}", i + 1, l.address, l.mapping,
                   l.is_folded ? " folded" : "");
    for (const core::Line& line : l.lines) {
      if (line.function == 0) {
        fmt::format_to(it, " | ?");
        continue;
      }
      const core::Function& f = p.function(line.function);
      fmt::format_to(it, " | {} {}:{}", p.str(f.name), p.str(f.filename), line.line);
      if (line.column) fmt::format_to(it, ":{}", line.column);
    }
    fmt::format_to(it, "\n");
  }
  for (size_t i = 0; i < p.functions.size(); ++i) {
    const core::Function& f = p.functions[i];
    fmt::format_to(it, "function {}: {} [{}] {}:{}\n", i + 1, p.str(f.name), p.str(f.system_name),
                   p.str(f.filename), f.start_line);
  }
  for (size_t i = 0; i < p.mappings.size(); ++i) {
    const core::Mapping& m = p.mappings[i];
    fmt::format_to(it, "mapping {}: 0x{:x}-0x{:x} offset 0x{:x} {}{}{}{}{}{}\n", i + 1, m.start,
                   m.limit, m.offset, p.str(m.file),
                   m.build_id ? " build_id=" + std::string(p.str(m.build_id)) : "",
                   m.has_functions ? " [functions]" : "", m.has_filenames ? " [filenames]" : "",
                   m.has_line_numbers ? " [lines]" : "", m.has_inline_frames ? " [inlines]" : "");
  }
  print_call_graph(p, out);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

}  // namespace tally::cli
