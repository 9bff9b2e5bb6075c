// `tally peek REGEX FILE`: pprof -peek, the callers and callees of the matching functions
// (stack profiles; on callgrind files the calls with their inclusive cost).
#include <cstdio>
#include <memory>

#include "analyze/peek.h"
#include "cli/command.h"
#include "cli/symbolize_flags.h"
#include "formats/format.h"
#include "io/input.h"

namespace tally::cli {

namespace {

struct PeekCommandOptions {
  std::string regex;
  std::string file;
  std::string granularity = "functions";
  bool no_inlines = false;
  analyze::NameFilters filters;
  std::string sample_index;
  SymbolizeFlags symbolize;
};

int run_peek(const PeekCommandOptions& opt) {
  analyze::PeekOptions peek;
  if (!analyze::parse_granularity(opt.granularity, peek.nodes.granularity)) {
    std::fprintf(stderr,
                 "tally: error: --granularity must be functions, files, lines or addresses, "
                 "not '%s'\n",
                 opt.granularity.c_str());
    return kUsage;
  }
  peek.regex = opt.regex;
  peek.nodes.inlines = !opt.no_inlines;
  peek.filters = opt.filters;
  peek.sample_index = opt.sample_index;

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
  auto result = analyze::compute_peek(*profile, peek);
  if (!result) return report(result.error());
  for (const std::string& w : result->summary.warnings)
    std::fprintf(stderr, "tally: warning: %s\n", w.c_str());
  const std::string text = analyze::format_tree(*result);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kOk;
}

}  // namespace

void add_peek_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<PeekCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "peek", "The callers and callees of the functions matching REGEX, with the cost of "
              "each edge, as pprof -peek prints them. On callgrind files: the calls with "
              "their inclusive cost (callgrind_annotate --tree=both).");
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
  cmd->add_option("REGEX", opt->regex, "functions to show (searched in the names)")->required();
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input")->required();
  cmd->final_callback([opt, &run] { run = [opt] { return run_peek(*opt); }; });
}

}  // namespace tally::cli
