// `tally traces FILE`: pprof -traces, every sample with its value and stack.
#include <cstdio>
#include <memory>

#include "analyze/traces.h"
#include "cli/command.h"
#include "cli/symbolize_flags.h"
#include "formats/format.h"
#include "io/input.h"

namespace tally::cli {

namespace {

struct TracesCommandOptions {
  std::string file;
  std::string granularity = "functions";
  bool no_inlines = false;
  analyze::NameFilters filters;
  std::string sample_index;
  SymbolizeFlags symbolize;
};

int run_traces(const TracesCommandOptions& opt) {
  analyze::TracesOptions traces;
  if (!analyze::parse_granularity(opt.granularity, traces.nodes.granularity)) {
    std::fprintf(stderr,
                 "tally: error: --granularity must be functions, files, lines or addresses, "
                 "not '%s'\n",
                 opt.granularity.c_str());
    return kUsage;
  }
  traces.nodes.inlines = !opt.no_inlines;
  traces.filters = opt.filters;
  traces.sample_index = opt.sample_index;

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
  auto result = analyze::compute_traces(*profile, traces);
  if (!result) return report(result.error());
  const std::string text = analyze::format_traces(*result);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kOk;
}

}  // namespace

void add_traces_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<TracesCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "traces", "Every sample with its value and its stack, leaf first, as pprof -traces "
                "prints them. Stack profiles only.");
  cmd->add_option("--granularity", opt->granularity,
                  "aggregate by functions (default), files, lines or addresses");
  cmd->add_option("--focus", opt->filters.focus,
                  "keep only samples whose stack has a frame matching REGEX");
  cmd->add_option("--ignore", opt->filters.ignore,
                  "drop samples whose stack has a frame matching REGEX");
  cmd->add_option("--hide", opt->filters.hide, "remove frames matching REGEX from the stacks");
  cmd->add_option("--show", opt->filters.show, "keep only frames matching REGEX in the stacks");
  cmd->add_option("--sample-index", opt->sample_index,
                  "the value to report, by name (cpu, samples), type/unit or 0-based index");
  cmd->add_flag("--no-inlines", opt->no_inlines,
                "attribute inlined code to the function it was inlined into");
  add_symbolize_flags(cmd, opt->symbolize, "local");
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input")->required();
  cmd->final_callback([opt, &run] { run = [opt] { return run_traces(*opt); }; });
}

}  // namespace tally::cli
