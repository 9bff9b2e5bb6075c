#include <fmt/format.h>

#include "web/report_json.h"

namespace tally::web {

nlohmann::json disasm_json(const analyze::DisasmReport& report) {
  nlohmann::json routines = nlohmann::json::array();
  for (const analyze::DisasmRoutine& routine : report.routines) {
    nlohmann::json instructions = nlohmann::json::array();
    for (const analyze::DisasmInstruction& ins : routine.instructions)
      instructions.push_back({{"address", fmt::format("{:#x}", ins.address)},
                              {"text", ins.text},
                              {"flat", ins.flat},
                              {"cum", ins.cum},
                              {"function", ins.function},
                              {"file", ins.file},
                              {"line", ins.line}});
    routines.push_back({{"name", routine.name},
                        {"flat", routine.flat},
                        {"cum", routine.cum},
                        {"instructions", std::move(instructions)}});
  }
  return {{"total", report.total}, {"unit", report.sample_unit}, {"routines", std::move(routines)}};
}

}  // namespace tally::web
