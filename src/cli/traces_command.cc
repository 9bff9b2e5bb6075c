// `tally traces FILE`: pprof -traces, every sample with its value and stack.
#include <cstdio>
#include <memory>

#include "analyze/traces.h"
#include "cli/command.h"
#include "cli/report_driver.h"

namespace tally::cli {

namespace {

struct TracesCommandOptions {
  std::string file;
  ReportFlags report;
};

int run_traces(const TracesCommandOptions& opt) {
  analyze::TracesOptions traces;
  if (!node_options(opt.report, traces.nodes)) return kUsage;
  traces.filters = opt.report.filters;
  traces.sample_index = opt.report.sample_index;
  return run_report(opt.file, opt.report,
                    [&](const core::Profile& profile,
                        std::vector<std::string>&) -> core::Expected<std::string> {
                      auto result = analyze::compute_traces(profile, traces);
                      if (!result) return result.error();
                      return analyze::format_traces(*result);
                    });
}

}  // namespace

void add_traces_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<TracesCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "traces", "Every sample with its value and its stack, leaf first, as pprof -traces "
                "prints them. Stack profiles only.");
  add_report_flags(cmd, opt->report);
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input (or --db DIR)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_traces(*opt); }; });
}

}  // namespace tally::cli
