#include "analyze/confidence.h"
#include "web/report_json.h"

namespace tally::web {

namespace {
double percent(int64_t part, int64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}
}  // namespace

nlohmann::json top_json(const analyze::TopReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const analyze::TopRow& row : report.rows) {
    std::string name = row.name;
    if (!row.inline_label.empty()) name += " " + row.inline_label;
    nlohmann::json pm = nullptr;  // exact counts (call graphs) have no sampling error
    if (!report.call_graph) pm = analyze::share_interval_95(row.flat_samples, report.total_samples);
    rows.push_back({{"name", std::move(name)},
                    {"flat", row.flat},
                    {"cum", row.cum},
                    {"flat_pct", percent(row.flat, report.total)},
                    {"cum_pct", percent(row.cum, report.total)},
                    {"flat_pm", std::move(pm)}});
  }
  return {{"total", report.total},
          {"unit", report.sample_unit},
          {"rows", std::move(rows)},
          {"warnings", report.warnings}};
}

}  // namespace tally::web
