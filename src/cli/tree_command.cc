// `tally tree FILE`: pprof -tree, every node with its callers and callees (stack profiles).
#include <cstdio>
#include <memory>

#include "analyze/tree.h"
#include "cli/command.h"
#include "cli/report_driver.h"

namespace tally::cli {

namespace {

struct TreeCommandOptions {
  std::string file;
  int node_count = 80;
  bool cum = false;
  ReportFlags report;
};

int run_tree(const TreeCommandOptions& opt) {
  analyze::TreeOptions tree;
  if (!node_options(opt.report, tree.nodes)) return kUsage;
  tree.node_count = opt.node_count > 0 ? static_cast<size_t>(opt.node_count) : 0;
  tree.sort_by_cum = opt.cum;
  tree.filters = opt.report.filters;
  tree.sample_index = opt.report.sample_index;
  return run_report(opt.file, opt.report,
                    [&](const core::Profile& profile,
                        std::vector<std::string>& warnings) -> core::Expected<std::string> {
                      auto result = analyze::compute_tree(profile, tree);
                      if (!result) return result.error();
                      warnings = result->summary.warnings;
                      return analyze::format_tree(*result);
                    });
}

}  // namespace

void add_tree_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<TreeCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tree", "Every function with its callers above and its callees below, with the cost "
              "of each edge, as pprof -tree prints them. Stack profiles only.");
  cmd->add_option("--nodecount", opt->node_count, "show at most N nodes (default: 80; 0: all)");
  cmd->add_flag("--cum", opt->cum, "order nodes by cum instead of flat");
  add_report_flags(cmd, opt->report);
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input (or --db DIR)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_tree(*opt); }; });
}

}  // namespace tally::cli
