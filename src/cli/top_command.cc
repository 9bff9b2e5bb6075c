// `tally top FILE`: pprof -top from the model, on stack and call-graph profiles alike,
// with a ± column (the 95% confidence interval of flat% from the sample count).
#include <cstdio>
#include <memory>

#include "analyze/top.h"
#include "analyze/top_text.h"
#include "cli/command.h"
#include "cli/symbolize_flags.h"
#include "formats/format.h"
#include "io/input.h"

namespace tally::cli {

namespace {

struct TopCommandOptions {
  std::string file;
  int node_count = 0;
  std::string sort = "flat";
  std::string granularity = "functions";
  bool no_inlines = false;
  analyze::NameFilters filters;
  std::string sample_index;
  SymbolizeFlags symbolize;
};

int run_top(const TopCommandOptions& opt) {
  analyze::TopOptions top;
  if (opt.sort != "flat" && opt.sort != "cum") {
    std::fprintf(stderr, "tally: error: --sort must be flat or cum, not '%s'\n", opt.sort.c_str());
    return kUsage;
  }
  if (!analyze::parse_granularity(opt.granularity, top.nodes.granularity)) {
    std::fprintf(stderr,
                 "tally: error: --granularity must be functions, files, lines or addresses, "
                 "not '%s'\n",
                 opt.granularity.c_str());
    return kUsage;
  }
  top.sort_by_cum = opt.sort == "cum";
  top.node_count = opt.node_count > 0 ? static_cast<size_t>(opt.node_count) : 0;
  top.nodes.inlines = !opt.no_inlines;
  top.filters = opt.filters;
  top.sample_index = opt.sample_index;

  auto in = io::Input::open(opt.file);
  if (!in) return report(in.error());
  core::Diagnostics diagnostics;
  auto profile = formats::read_profile(std::move(*in), diagnostics, nullptr, /*canonical=*/false);
  if (!profile) {
    print_warnings(diagnostics);
    return report(profile.error());
  }
  if (auto st = apply_symbolize_flags(opt.symbolize, *profile, diagnostics); !st) {
    print_warnings(diagnostics);
    return report(st.error());
  }
  print_warnings(diagnostics);
  auto result = analyze::compute_top(*profile, top);
  if (!result) return report(result.error());
  for (const std::string& w : result->warnings)
    std::fprintf(stderr, "tally: warning: %s\n", w.c_str());
  const std::string text = analyze::format_top(*result);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kOk;
}

}  // namespace

void add_top_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<TopCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "top", "The functions (or files, lines, addresses) with the most cost, as pprof -top "
             "prints them, plus a ± column: the 95% confidence interval of flat% from the "
             "sample count. On callgrind files flat is the self cost and cum the inclusive "
             "cost (as callgrind_annotate --inclusive=yes), and ± is \"-\": counts are exact.");
  cmd->add_option("--nodecount", opt->node_count, "show at most N nodes (default: all)");
  cmd->add_option("--sort", opt->sort, "order rows by flat (default) or cum");
  cmd->add_option("--granularity", opt->granularity,
                  "aggregate by functions (default), files, lines or addresses");
  cmd->add_option("--focus", opt->filters.focus,
                  "keep only samples whose stack has a frame matching REGEX");
  cmd->add_option("--ignore", opt->filters.ignore,
                  "drop samples whose stack has a frame matching REGEX");
  cmd->add_option("--hide", opt->filters.hide, "remove frames matching REGEX from the stacks");
  cmd->add_option("--show", opt->filters.show, "keep only frames matching REGEX in the stacks");
  cmd->add_option("--sample-index", opt->sample_index,
                  "the value to report, by name (cpu, samples), type/unit or 0-based index; "
                  "default: the profile's default type, else the last");
  cmd->add_flag("--no-inlines", opt->no_inlines,
                "attribute inlined code to the function it was inlined into");
  add_symbolize_flags(cmd, opt->symbolize, "local");
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input")->required();
  cmd->final_callback([opt, &run] { run = [opt] { return run_top(*opt); }; });
}

}  // namespace tally::cli
