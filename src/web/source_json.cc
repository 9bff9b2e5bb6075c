#include "web/report_json.h"

namespace tally::web {

nlohmann::json source_json(const analyze::ListReport& report) {
  nlohmann::json routines = nlohmann::json::array();
  for (const analyze::ListRoutine& routine : report.routines) {
    nlohmann::json lines = nlohmann::json::array();
    for (const analyze::ListLine& line : routine.lines)
      lines.push_back(
          {{"line", line.line}, {"text", line.text}, {"flat", line.flat}, {"cum", line.cum}});
    nlohmann::json entry = {{"name", routine.name},
                            {"file", routine.file},
                            {"flat", routine.flat},
                            {"cum", routine.cum},
                            {"lines", std::move(lines)}};
    if (!routine.error.empty()) entry["error"] = routine.error;  // the source was not found
    routines.push_back(std::move(entry));
  }
  return {{"total", report.total}, {"unit", report.sample_unit}, {"routines", std::move(routines)}};
}

}  // namespace tally::web
