#include "web/report_json.h"

namespace tally::web {

namespace {
// "added"/"removed" when a side has no cost at all, "changed" when the z-test says the
// flat share moved beyond sampling noise (as `tally diff` marks it), else "same".
const char* status_of(const analyze::DiffRow& row) {
  if (row.base_flat == 0 && row.base_cum == 0 && (row.new_flat != 0 || row.new_cum != 0))
    return "added";
  if (row.new_flat == 0 && row.new_cum == 0 && (row.base_flat != 0 || row.base_cum != 0))
    return "removed";
  return row.significant ? "changed" : "same";
}
}  // namespace

nlohmann::json diff_json(const analyze::DiffReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const analyze::DiffRow& row : report.rows)
    rows.push_back({{"name", row.name},
                    {"base", row.base_flat},
                    {"new", row.new_flat},
                    {"base_pct", 100.0 * row.base_flat_share},
                    {"new_pct", 100.0 * row.new_flat_share},
                    {"delta_pp", 100.0 * row.flat_change()},
                    {"p_value", row.test.p},
                    {"significant", row.significant},
                    {"status", status_of(row)}});
  return {{"unit", report.sample_unit},
          {"base_total", report.base_total},
          {"new_total", report.new_total},
          {"rows", std::move(rows)}};
}

}  // namespace tally::web
