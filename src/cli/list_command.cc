// `tally list REGEX FILE`: pprof -list, the source of the matching functions with flat
// and cum per line (stack profiles, and callgrind files: self and call costs per line).
#include <cstdio>
#include <memory>

#include "analyze/source_list.h"
#include "cli/command.h"
#include "cli/report_driver.h"

namespace tally::cli {

namespace {

struct ListCommandOptions {
  std::string regex;
  std::string file;
  std::string source_path;
  std::string trim_path;
  ReportFlags report;
};

int run_list(const ListCommandOptions& opt) {
  analyze::ListOptions list;
  list.regex = opt.regex;
  list.inlines = !opt.report.no_inlines;
  list.filters = opt.report.filters;
  list.sample_index = opt.report.sample_index;
  return run_report(opt.file, opt.report,
                    [&](const core::Profile& profile,
                        std::vector<std::string>& warnings) -> core::Expected<std::string> {
                      analyze::SourceFiles sources(opt.source_path, opt.trim_path);
                      auto result = analyze::compute_list(profile, list, sources);
                      if (!result) return result.error();
                      warnings = result->warnings;
                      return analyze::format_list(*result);
                    });
}

}  // namespace

void add_list_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<ListCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "list", "The source of the functions matching REGEX with flat and cum per line, as "
              "pprof -list prints it. On callgrind files: self cost per line, and the "
              "inclusive cost of the calls made on a line in its cum.");
  add_report_flags(cmd, opt->report, /*with_granularity=*/false);
  opt->report.shows_positions = true;  // a line or an instruction per row
  cmd->add_option("--source-path", opt->source_path,
                  "':'-separated directories to look for source files in (each and its "
                  "parents); default: the current directory");
  cmd->add_option("--trim-path", opt->trim_path,
                  "':'-separated path prefixes to remove from the profile's file names before "
                  "searching (default: guessed from the --source-path directories' names)");
  cmd->add_option("REGEX", opt->regex, "functions to list (searched in the names)")->required();
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input (or --db DIR)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_list(*opt); }; });
}

}  // namespace tally::cli
