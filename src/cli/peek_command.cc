// `tally peek REGEX FILE`: pprof -peek, the callers and callees of the matching functions
// (stack profiles; on callgrind files the calls with their inclusive cost).
#include <cstdio>
#include <memory>

#include "analyze/peek.h"
#include "cli/command.h"
#include "cli/report_driver.h"

namespace tally::cli {

namespace {

struct PeekCommandOptions {
  std::string regex;
  std::string file;
  ReportFlags report;
};

int run_peek(const PeekCommandOptions& opt) {
  analyze::PeekOptions peek;
  if (!node_options(opt.report, peek.nodes)) return kUsage;
  peek.regex = opt.regex;
  peek.filters = opt.report.filters;
  peek.sample_index = opt.report.sample_index;
  return run_report(opt.file, opt.report,
                    [&](const core::Profile& profile,
                        std::vector<std::string>& warnings) -> core::Expected<std::string> {
                      auto result = analyze::compute_peek(profile, peek);
                      if (!result) return result.error();
                      warnings = result->summary.warnings;
                      return analyze::format_tree(*result);
                    });
}

}  // namespace

void add_peek_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<PeekCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "peek", "The callers and callees of the functions matching REGEX, with the cost of "
              "each edge, as pprof -peek prints them. On callgrind files: the calls with "
              "their inclusive cost (callgrind_annotate --tree=both).");
  add_report_flags(cmd, opt->report);
  cmd->add_option("REGEX", opt->regex, "functions to show (searched in the names)")->required();
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input (or --db DIR)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_peek(*opt); }; });
}

}  // namespace tally::cli
