#include "perf_script_view.h"

#include "formats/perfscript/perf_script.h"
#include "support/test_support.h"

namespace tally::test {

core::Expected<core::Profile> read_perf_script_text(std::string_view text,
                                                    core::Diagnostics& diagnostics,
                                                    const std::string& source) {
  return perfscript::read_profile(bytes_of(text), source, diagnostics);
}

core::Expected<core::Profile> read_perf_script_file(const std::string& path) {
  core::Diagnostics diagnostics;
  return read_perf_script_text(read_text(path), diagnostics, path);
}

namespace {

std::vector<std::string> names(const core::Profile& p, size_t sample, bool system) {
  std::vector<std::string> out;
  for (core::LocationId id : p.stack(sample)) {
    const core::Location& loc = p.location(id);
    if (loc.lines.empty()) out.emplace_back("[unknown]");
    for (const core::Line& line : loc.lines) {
      const core::Function& f = p.function(line.function);
      out.emplace_back(p.str(system ? f.system_name : f.name));
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> frame_names(const core::Profile& p, size_t sample) {
  return names(p, sample, false);
}

std::vector<std::string> frame_system_names(const core::Profile& p, size_t sample) {
  return names(p, sample, true);
}

std::string leaf_name(const core::Profile& p, size_t sample) {
  auto frames = frame_names(p, sample);
  return frames.empty() ? "" : frames.front();
}

std::map<std::string, int64_t> leaf_totals(const core::Profile& p, size_t value) {
  std::map<std::string, int64_t> totals;
  for (size_t i = 0; i < p.sample_count(); ++i) totals[leaf_name(p, i)] += p.values(i)[value];
  return totals;
}

std::optional<int64_t> num_label(const core::Profile& p, size_t sample, std::string_view key) {
  for (const core::Label& l : p.labels(sample))
    if (p.str(l.key) == key && l.str == 0) return l.num;
  return std::nullopt;
}

std::string str_label(const core::Profile& p, size_t sample, std::string_view key) {
  for (const core::Label& l : p.labels(sample))
    if (p.str(l.key) == key) return std::string(p.str(l.str));
  return "";
}

int64_t total_where(const core::Profile& p, size_t value, std::string_view comm,
                    std::optional<int64_t> tid) {
  int64_t total = 0;
  for (size_t i = 0; i < p.sample_count(); ++i)
    if (str_label(p, i, "comm") == comm && (!tid || num_label(p, i, "tid") == tid))
      total += p.values(i)[value];
  return total;
}

std::vector<std::string> sample_type_names(const core::Profile& p) {
  std::vector<std::string> out;
  for (const auto& t : p.sample_types)
    out.push_back(std::string(p.str(t.type)) + "/" + std::string(p.str(t.unit)));
  return out;
}

}  // namespace tally::test
