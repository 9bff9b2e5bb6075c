// `tally diff BASE NEW`: per-function change between two profiles, each share of its own
// total, with a two-proportion z-test telling real changes from sampling noise.
#include <cstdio>
#include <memory>

#include "analyze/diff.h"
#include "cli/command.h"
#include "cli/report_driver.h"

namespace tally::cli {

namespace {

struct DiffCommandOptions {
  std::string base_file, new_file;
  int node_count = 0;
  double significance = 0.05;
  ReportFlags report;
};

int run_diff(const DiffCommandOptions& opt) {
  analyze::DiffOptions diff;
  if (!node_options(opt.report, diff.top.nodes)) return kUsage;
  if (!(opt.significance > 0 && opt.significance < 1)) {
    std::fprintf(stderr, "tally: error: --significance must be between 0 and 1\n");
    return kUsage;
  }
  diff.top.filters = opt.report.filters;
  diff.top.sample_index = opt.report.sample_index;
  diff.node_count = opt.node_count > 0 ? static_cast<size_t>(opt.node_count) : 0;
  diff.significance = opt.significance;

  const store::Selection& db = opt.report.db;
  if (!using_db(db) && !check_profile_source(opt.base_file, db)) return kUsage;
  if (using_db(db) && (!db.epoch.empty() || !db.since.empty() || !db.epoch_to.empty())) {
    std::fprintf(stderr, "tally: error: with --db, BASE and NEW are the epochs to compare; "
                         "--epoch, --epoch-to and --since do not apply\n");
    return kUsage;
  }
  // With --db, each side is an epoch (or a prefix naming several, or "all").
  const auto read_side = [&](const std::string& arg) {
    if (!using_db(db)) return read_report_profile(arg, opt.report);
    store::Selection side = db;
    side.epoch = arg;
    return read_db_selection(side, opt.report.symbolize);
  };
  auto base = read_side(opt.base_file);
  if (!base) return report(base.error());
  auto next = read_side(opt.new_file);
  if (!next) return report(next.error());
  return emit_report([&](std::vector<std::string>& warnings) -> core::Expected<std::string> {
    auto result = analyze::compute_diff(*base, *next, diff);
    if (!result) return result.error();
    warnings = result->warnings;
    return analyze::format_diff(*result);
  });
}

}  // namespace

void add_diff_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<DiffCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Per-function change from BASE to NEW: flat and cum as shares of each "
              "profile's own total, the change in percentage points, and a two-proportion "
              "z-test on the flat sample counts; changes with p below --significance are "
              "marked *. Largest flat changes first. With --db DIR, BASE and NEW are epochs of "
              "the profile database.");
  cmd->add_option("--nodecount", opt->node_count, "show at most N nodes (default: all)");
  cmd->add_option("--significance", opt->significance,
                  "the p-value under which a change is marked (default 0.05)");
  add_report_flags(cmd, opt->report);
  cmd->add_option("BASE", opt->base_file, "the base profile (with --db: an epoch)")->required();
  cmd->add_option("NEW", opt->new_file, "the new profile (with --db: an epoch)")->required();
  cmd->final_callback([opt, &run] { run = [opt] { return run_diff(*opt); }; });
}

}  // namespace tally::cli
