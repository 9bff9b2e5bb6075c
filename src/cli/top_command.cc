// `tally top FILE`: pprof -top from the model, on stack and call-graph profiles alike,
// with a ± column (the 95% confidence interval of flat% from the sample count).
#include <cstdio>
#include <memory>

#include "analyze/images.h"
#include "analyze/top.h"
#include "analyze/top_text.h"
#include "cli/command.h"
#include "cli/report_driver.h"
#include "cli/thread_totals.h"

namespace tally::cli {

namespace {

struct TopCommandOptions {
  std::string file;
  int node_count = 0;
  std::string sort = "flat";
  bool threads = false;
  ReportFlags report;
};

int run_top(const TopCommandOptions& opt) {
  analyze::TopOptions top;
  if (opt.sort != "flat" && opt.sort != "cum") {
    std::fprintf(stderr, "tally: error: --sort must be flat or cum, not '%s'\n", opt.sort.c_str());
    return kUsage;
  }
  if (!node_options(opt.report, top.nodes)) return kUsage;
  top.sort_by_cum = opt.sort == "cum";
  top.node_count = opt.node_count > 0 ? static_cast<size_t>(opt.node_count) : 0;
  top.filters = opt.report.filters;
  top.sample_index = opt.report.sample_index;

  return run_report(
      opt.file, opt.report,
      [&](const core::Profile& profile,
          std::vector<std::string>& warnings) -> core::Expected<std::string> {
        if (opt.threads) return thread_totals_text(profile, top.filters, top.sample_index);
        auto result = analyze::compute_top(profile, top);
        if (!result) return result.error();
        warnings = result->warnings;
        if (!using_db(opt.report.db)) return analyze::format_top(*result);
        // Many images: the per-image table first (dcpiprof -i), and no one "File:".
        auto images = analyze::compute_images(profile, top.sample_index);
        if (!images) return images.error();
        result->file.clear();
        result->build_id.clear();
        return "Images:\n" + analyze::format_images(*images) + "\nFunctions:\n" +
               analyze::format_top(*result);
      });
}

}  // namespace

void add_top_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<TopCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "top", "The functions (or files, lines, addresses) with the most cost, as pprof -top "
             "prints them, plus a ± column: the 95% confidence interval of flat% from the "
             "sample count. On callgrind files flat is the self cost and cum the inclusive "
             "cost (as callgrind_annotate --inclusive=yes), and ± is \"-\": counts are exact. "
             "With --db DIR, the profile database: first the cost per image (dcpiprof -i), "
             "then per function across images.");
  cmd->add_option("--nodecount", opt->node_count, "show at most N nodes (default: all)");
  cmd->add_option("--sort", opt->sort, "order rows by flat (default) or cum");
  cmd->add_flag("--threads", opt->threads,
                "per-thread totals instead (tid label): on-CPU, off-CPU by reason and wall "
                "time for tally record --off-cpu profiles, else the reported value");
  add_report_flags(cmd, opt->report);
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input (or --db DIR)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_top(*opt); }; });
}

}  // namespace tally::cli
