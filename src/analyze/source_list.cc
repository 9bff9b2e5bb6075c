#include "analyze/source_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/nodes.h"
#include "analyze/listing.h"
#include "analyze/units.h"
#include "core/checked_math.h"

namespace tally::analyze {

namespace {

using core::accumulate_saturating;

constexpr int64_t kMargin = 5;  // pprof's lines shown around the sampled ones

// The nodes of one function in one file.
struct Group {
  std::vector<NodeId> nodes;
};

// The routine of one function in one source file: pprof's getSourceFromFile.
ListRoutine make_routine(const std::string& name, const std::string& file, const Group& group,
                         const NodeIndex& nodes, const NodeSums& sums, SourceFiles& sources) {
  ListRoutine r;
  r.name = name;
  r.file = file;
  std::map<int64_t, std::pair<int64_t, int64_t>> per_line;  // line -> flat, cum
  int64_t start = INT64_MAX, end = INT64_MIN;
  for (NodeId n : group.nodes) {
    const NodeKey& k = nodes.key(n);
    accumulate_saturating(r.flat, sums.flat[n]);
    accumulate_saturating(r.cum, sums.cum[n]);
    auto& [flat, cum] = per_line[k.line];
    accumulate_saturating(flat, sums.flat[n]);
    accumulate_saturating(cum, sums.cum[n]);
    // A known start line opens the listing; else 5 lines before the sampled line. Line
    // numbers come from the file too.
    start = std::min(start,
                     k.start_line != 0 ? k.start_line : core::sub_saturating(k.line, kMargin));
    end = std::max(end, core::add_saturating(k.line, kMargin));
  }
  start = std::max<int64_t>(start, 1);
  const std::vector<std::string>* text = sources.lines(file);
  if (text == nullptr) {
    r.error = sources.error(file);
    for (const auto& [line, values] : per_line)
      if (values.first != 0 || values.second != 0) {
        ListLine& out = r.lines.emplace_back();
        out.line = line;
        std::tie(out.flat, out.cum) = values;
      }
    return r;
  }
  for (int64_t line = start; line <= end && line <= static_cast<int64_t>(text->size()); ++line) {
    ListLine out;
    out.line = line;
    out.text = (*text)[static_cast<size_t>(line - 1)];
    if (auto it = per_line.find(line); it != per_line.end())
      std::tie(out.flat, out.cum) = it->second;
    r.lines.push_back(std::move(out));
  }
  return r;
}

}  // namespace

core::Expected<ListReport> compute_list(const core::Profile& p, const ListOptions& options,
                                        SourceFiles& sources) {
  auto basis = listing_basis(p, options.regex, options.filters, options.sample_index);
  if (!basis) return basis.error();
  ListReport report;
  report.sample_unit = basis->sample_unit;
  report.total = basis->total;
  report.warnings = basis->warnings;
  const LocationFilter& filter = basis->filter;
  const NodeIndex nodes(p,
                        {.granularity = Granularity::lines,
                         .inlines = options.inlines,
                         .object_names = true},
                        &filter);
  const NodeSums sums = sum_positions(p, nodes, filter, basis->value);

  // function name -> shown file ("" for none) -> nodes; both in byte order, as pprof sorts.
  std::map<std::string, std::map<std::string, Group>> functions;
  std::vector<int8_t> name_matches(p.strings.size(), -1);  // per name: unknown, no, yes
  for (NodeId n = 0; n < nodes.size(); ++n) {
    if (sums.flat[n] == 0 && sums.cum[n] == 0) continue;
    const NodeKey& k = nodes.key(n);
    const std::string name(k.name != 0 ? p.str(k.name) : std::string_view());
    int8_t& matches = name_matches[k.name];
    if (matches < 0) matches = std::regex_search(name, basis->pattern) ? 1 : 0;
    if (matches == 0) continue;
    const std::string& file = nodes.file(n);
    functions[name][file.empty() ? file : sources.display_name(file)].nodes.push_back(n);
  }
  if (functions.empty())
    return core::Error{"no matches found for regexp: " + options.regex,
                       core::ErrorKind::invalid_input};
  for (const auto& [name, files] : functions) {
    bool any_file = false;
    for (const auto& [file, group] : files) {
      if (file.empty()) continue;
      any_file = true;
      report.routines.push_back(make_routine(name, file, group, nodes, sums, sources));
    }
    if (!any_file) report.routines.emplace_back().name = name;
  }
  return report;
}

std::string format_list(const ListReport& r) {
  const ListingValues value{r.sample_unit};
  std::string out = fmt::format("Total: {}\n", value(r.total));
  auto put = std::back_inserter(out);
  for (const ListRoutine& routine : r.routines) {
    if (routine.file.empty()) {
      fmt::format_to(put, "No source information for {}\n", routine.name);
      continue;
    }
    fmt::format_to(put, "ROUTINE ======================== {} in {}\n", routine.name, routine.file);
    out += value.routine_totals(routine.flat, routine.cum, r.total);
    if (!routine.error.empty())
      fmt::format_to(put, " Error: {}\n (source not found: the sampled lines follow without "
                          "their text; see --source-path and --trim-path)\n",
                     routine.error);
    for (const ListLine& line : routine.lines)
      fmt::format_to(put, "{:>10} {:>10} {:>6}:{}\n", value.or_dot(line.flat),
                     value.or_dot(line.cum), line.line, line.text);
  }
  return out;
}

}  // namespace tally::analyze
