#include "cli/thread_totals.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/checked_math.h"

namespace tally::cli {

namespace {

// The reasons' column order (collect/off_cpu.h's names); others follow by name.
constexpr std::array<std::string_view, 6> kReasonOrder{"sleep", "futex", "io", "preempted",
                                                       "other", "blocked"};

struct ThreadRow {
  std::string comm;
  std::vector<int64_t> values;              // per shown type
  std::map<std::string, int64_t> off_cpu;  // by reason
};

int reason_rank(const std::string& reason) {
  auto it = std::find(kReasonOrder.begin(), kReasonOrder.end(), reason);
  return static_cast<int>(it - kReasonOrder.begin());
}

std::string shown(int64_t value, bool nanoseconds) {
  if (!nanoseconds) return fmt::format("{}", value);
  return fmt::format("{:.1f}", static_cast<double>(value) / 1e6);
}

// The sample type given by name or 0-based index, else the default one, else the last.
int chosen_type(const core::Profile& p, const std::string& sample_index) {
  if (!sample_index.empty()) {
    if (int i = p.sample_type_index(sample_index); i >= 0) return i;
    if (std::all_of(sample_index.begin(), sample_index.end(), ::isdigit)) {
      size_t i = std::stoul(sample_index);
      if (i < p.sample_types.size()) return static_cast<int>(i);
    }
    return -1;
  }
  if (p.default_sample_type != 0) {
    if (int i = p.sample_type_index(p.str(p.default_sample_type)); i >= 0) return i;
  }
  return static_cast<int>(p.sample_types.size()) - 1;
}

}  // namespace

core::Expected<std::string> thread_totals_text(const core::Profile& p,
                                               const analyze::NameFilters& filters,
                                               const std::string& sample_index) {
  auto filter = analyze::LocationFilter::create(p, filters);
  if (!filter) return filter.error();
  const int cpu = p.sample_type_index("cpu"), off = p.sample_type_index("off-cpu"),
            wall = p.sample_type_index("wall");
  const bool off_cpu_profile = off >= 0 && wall >= 0;
  std::vector<int> types;
  if (off_cpu_profile) {
    if (cpu >= 0) types.push_back(cpu);
    types.push_back(off);
    types.push_back(wall);
  } else {
    int t = chosen_type(p, sample_index);
    if (t < 0)
      return core::Error{fmt::format("--sample-index: the profile has no sample type '{}'",
                                     sample_index),
                         core::ErrorKind::invalid_input};
    types.push_back(t);
  }
  std::map<int64_t, ThreadRow> rows;  // by tid; -1: samples without a tid label
  std::set<std::string> reasons;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    if (!filter->keeps(i, p.stack(i))) continue;
    int64_t tid = -1;
    std::string comm, reason;
    for (const core::Label& l : p.labels(i)) {
      std::string_view key = p.str(l.key);
      if (key == "tid") tid = l.num;
      else if (key == "comm") comm = p.str(l.str);
      else if (key == "reason") reason = p.str(l.str);
    }
    ThreadRow& row = rows[tid];
    if (row.values.empty()) row.values.assign(types.size(), 0);
    if (row.comm.empty()) row.comm = comm;
    for (size_t t = 0; t < types.size(); ++t)
      core::accumulate_saturating(row.values[t], filter->value(p, i, static_cast<size_t>(types[t])));
    if (off_cpu_profile && p.values(i)[static_cast<size_t>(off)] != 0) {
      if (reason.empty()) reason = "unknown";
      core::accumulate_saturating(row.off_cpu[reason], filter->value(p, i, static_cast<size_t>(off)));
      reasons.insert(reason);
    }
  }
  std::vector<std::string> reason_columns(reasons.begin(), reasons.end());
  std::stable_sort(reason_columns.begin(), reason_columns.end(),
                   [](const std::string& a, const std::string& b) {
                     return reason_rank(a) < reason_rank(b);
                   });
  bool nanoseconds = true;
  for (int t : types) nanoseconds = nanoseconds && p.str(p.sample_types[static_cast<size_t>(t)].unit) == "nanoseconds";

  std::string out = nanoseconds ? "Threads (milliseconds)\n" : "Threads\n";
  std::vector<std::string> header{"tid", "comm"};
  for (size_t t = 0; t < types.size(); ++t) {
    header.push_back(std::string(p.str(p.sample_types[static_cast<size_t>(types[t])].type)));
    // The off-CPU split follows its total.
    if (off_cpu_profile && types[t] == off)
      for (const std::string& r : reason_columns) header.push_back(r);
  }
  std::vector<std::vector<std::string>> table{header};
  std::vector<std::pair<int64_t, const ThreadRow*>> order;
  for (const auto& [tid, row] : rows) order.push_back({tid, &row});
  // Most wall (or value) first, ties by tid.
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->values.back() > b.second->values.back();
  });
  for (const auto& [tid, row] : order) {
    std::vector<std::string> line{tid < 0 ? "-" : fmt::format("{}", tid),
                                  row->comm.empty() ? "-" : row->comm};
    for (size_t t = 0; t < types.size(); ++t) {
      line.push_back(shown(row->values[t], nanoseconds));
      if (off_cpu_profile && types[t] == off)
        for (const std::string& r : reason_columns) {
          auto it = row->off_cpu.find(r);
          line.push_back(shown(it == row->off_cpu.end() ? 0 : it->second, nanoseconds));
        }
    }
    table.push_back(std::move(line));
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& line : table)
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  for (const auto& line : table) {
    std::string text;
    for (size_t c = 0; c < line.size(); ++c) {
      if (c == 1) text += fmt::format("  {:<{}}", line[c], width[c]);
      else text += fmt::format("{}{:>{}}", c == 0 ? "" : "  ", line[c], width[c]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

}  // namespace tally::cli
