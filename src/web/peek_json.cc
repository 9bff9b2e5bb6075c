#include "web/report_json.h"

namespace tally::web {

namespace {
nlohmann::json links_json(const std::vector<analyze::TreeLink>& links) {
  nlohmann::json out = nlohmann::json::array();
  for (const analyze::TreeLink& link : links)
    out.push_back({{"name", link.name}, {"value", link.weight}});
  return out;
}
}  // namespace

nlohmann::json peek_json(const analyze::TreeReport& report) {
  nlohmann::json entries = nlohmann::json::array();
  for (const analyze::TreeEntry& entry : report.entries)
    entries.push_back({{"name", entry.name},
                       {"flat", entry.flat},
                       {"cum", entry.cum},
                       {"callers", links_json(entry.callers)},
                       {"callees", links_json(entry.callees)}});
  return {{"total", report.summary.total},
          {"unit", report.summary.sample_unit},
          {"entries", std::move(entries)}};
}

}  // namespace tally::web
