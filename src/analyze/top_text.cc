#include "analyze/top_text.h"

#include <fmt/format.h>

#include <ctime>

#include "analyze/confidence.h"
#include "analyze/units.h"
#include "core/checked_math.h"

namespace tally::analyze {

namespace {

// Go's time layout "Jan 2, 2006 at 3:04pm (MST)", in local time.
std::string format_time(int64_t nanos) {
  const std::time_t seconds = static_cast<std::time_t>(nanos / 1000000000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%b %d, %Y at %I:%M%p (%Z)", &local);
  std::string out = buffer;
  // Go prints day and hour without leading zero and "pm" in lower case.
  if (out[4] == '0') out.erase(4, 1);
  const size_t at = out.find(" at ");
  if (at != std::string::npos && out[at + 4] == '0') out.erase(at + 4, 1);
  const size_t meridiem = out.find("M (");
  if (meridiem != std::string::npos) {
    out[meridiem - 1] = static_cast<char>(std::tolower(out[meridiem - 1]));
    out[meridiem] = 'm';
  }
  return out;
}

std::string pad_left(const std::string& text, size_t width) {
  // The ± sign is two bytes of UTF-8 but one column.
  size_t columns = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++columns;
  return columns >= width ? text : std::string(width - columns, ' ') + text;
}

}  // namespace

std::string format_value(const TopReport& report, int64_t value) {
  return scaled_label(value, report.sample_unit, report.output_unit);
}

std::vector<std::string> top_header(const TopReport& r) {
  std::vector<std::string> lines;
  if (!r.file.empty()) lines.push_back("File: " + r.file);
  if (!r.build_id.empty()) lines.push_back("Build ID: " + r.build_id);
  for (const std::string& c : r.comments) lines.push_back(c);
  if (!r.sample_type.empty()) lines.push_back("Type: " + r.sample_type);
  if (r.time_nanos != 0) lines.push_back("Time: " + format_time(r.time_nanos));
  if (r.duration_nanos != 0) {
    std::string ratio;
    const Scaled total = scale(r.total, r.sample_unit, "nanoseconds");
    if (total.unit == "ns" && total.value != 0)
      ratio = "(" + percentage(core::to_int64_saturating(total.value), r.duration_nanos) + ")";
    lines.push_back(fmt::format("Duration: {}, Total samples = {} {}",
                                scaled_label(r.duration_nanos, "nanoseconds", "auto"),
                                format_value(r, r.total), ratio));
  }
  if (!r.active_filters.empty()) {
    lines.push_back("Active filters:");
    for (const std::string& f : r.active_filters) lines.push_back("   " + f);
  }
  std::string shown_percent = percentage(r.shown_flat, r.total);
  shown_percent.erase(0, shown_percent.find_first_not_of(' '));
  lines.push_back(fmt::format("Showing nodes accounting for {}, {} of {} total",
                              format_value(r, r.shown_flat), shown_percent,
                              format_value(r, r.total)));
  if (r.total != 0) {
    if (r.dropped_nodes > 0)
      lines.push_back(fmt::format("Dropped {} node{} (cum <= {})", r.dropped_nodes,
                                  r.dropped_nodes > 1 ? "s" : "", format_value(r, r.drop_cutoff)));
    if (!r.rows.empty() && r.rows.size() < r.nodes_before_count)
      lines.push_back(
          fmt::format("Showing top {} nodes out of {}", r.rows.size(), r.nodes_before_count));
  }
  return lines;
}

std::string format_top(const TopReport& r) {
  std::string out;
  for (const std::string& line : top_header(r)) {
    out += line;
    out += '\n';
  }
  fmt::format_to(std::back_inserter(out), "{:>10} {:>5}% {:>5}% {:>10} {:>5}% {}\n", "flat",
                 "flat", "sum", "cum", "cum", pad_left("±", 7));
  int64_t flat_sum = 0;
  for (const TopRow& row : r.rows) {
    core::accumulate_saturating(flat_sum, row.flat);
    // A call graph (callgrind) counts every event exactly: there is no sampling error.
    const std::string interval =
        r.call_graph ? std::string("-")
                     : format_interval(share_interval_95(row.flat_samples, r.total_samples));
    fmt::format_to(std::back_inserter(out), "{:>10} {} {} {:>10} {} {}  {}{}{}\n",
                   format_value(r, row.flat), percentage(row.flat, r.total),
                   percentage(flat_sum, r.total), format_value(r, row.cum),
                   percentage(row.cum, r.total), pad_left(interval, 7), row.name,
                   row.inline_label.empty() ? "" : " ", row.inline_label);
  }
  return out;
}

}  // namespace tally::analyze
