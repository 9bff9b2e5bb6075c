// `tally disasm REGEX FILE`: pprof -disasm, the instructions of the matching functions
// (capstone) with samples per instruction and the source line of each.
#include <cstdio>
#include <memory>

#include "analyze/disasm.h"
#include "cli/command.h"
#include "cli/report_driver.h"

namespace tally::cli {

namespace {

struct DisasmCommandOptions {
  std::string regex;
  std::string file;
  bool intel = false;
  ReportFlags report;
};

int run_disasm(const DisasmCommandOptions& opt) {
  analyze::DisasmOptions disasm;
  disasm.regex = opt.regex;
  disasm.filters = opt.report.filters;
  disasm.sample_index = opt.report.sample_index;
  disasm.syntax = opt.intel ? analyze::AsmSyntax::intel : analyze::AsmSyntax::att;
  disasm.binary_paths = opt.report.symbolize.binary_paths;
  disasm.debuginfod.enabled = !opt.report.symbolize.no_debuginfod;
  return run_report(opt.file, opt.report,
                    [&](const core::Profile& profile,
                        std::vector<std::string>& warnings) -> core::Expected<std::string> {
                      auto result = analyze::compute_disasm(profile, disasm);
                      if (!result) return result.error();
                      warnings = result->warnings;
                      return analyze::format_disasm(*result);
                    });
}

}  // namespace

void add_disasm_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<DisasmCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "disasm", "The instructions of the functions matching REGEX (from the binaries, with "
                "capstone) with flat and cum per instruction and the source line of each, as "
                "pprof -disasm prints them. Binaries are found like symbolization finds them "
                "(--binary-path, $PPROF_BINARY_PATH, the recorded path).");
  add_report_flags(cmd, opt->report, /*with_granularity=*/false);
  opt->report.shows_positions = true;  // a line or an instruction per row
  cmd->add_flag("--intel", opt->intel, "Intel syntax instead of AT&T (x86)");
  cmd->add_option("REGEX", opt->regex,
                  "functions to disassemble (searched in the symbol names, mangled or not; a "
                  "number selects the function at that address)")
      ->required();
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input (or --db DIR)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_disasm(*opt); }; });
}

}  // namespace tally::cli
