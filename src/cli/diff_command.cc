// `tally diff BASE NEW`: per-function change between two profiles, each share of its own
// total, with a two-proportion z-test telling real changes from sampling noise.
#include <cstdio>
#include <memory>

#include "analyze/diff.h"
#include "cli/command.h"
#include "cli/symbolize_flags.h"
#include "formats/format.h"
#include "io/input.h"

namespace tally::cli {

namespace {

struct DiffCommandOptions {
  std::string base_file, new_file;
  int node_count = 0;
  std::string granularity = "functions";
  bool no_inlines = false;
  analyze::NameFilters filters;
  std::string sample_index;
  double significance = 0.05;
  SymbolizeFlags symbolize;
};

core::Expected<core::Profile> read(const std::string& file, const SymbolizeFlags& symbolize) {
  auto in = io::Input::open(file);
  if (!in) return in.error();
  core::Diagnostics diagnostics;
  auto profile = formats::read_profile(std::move(*in), diagnostics, nullptr, /*canonical=*/false);
  if (profile) {
    if (auto st = apply_symbolize_flags(symbolize, *profile, diagnostics); !st) {
      print_warnings(diagnostics);
      return st.error();
    }
  }
  print_warnings(diagnostics);
  return profile;
}

int run_diff(const DiffCommandOptions& opt) {
  analyze::DiffOptions diff;
  if (!analyze::parse_granularity(opt.granularity, diff.top.nodes.granularity)) {
    std::fprintf(stderr,
                 "tally: error: --granularity must be functions, files, lines or addresses, "
                 "not '%s'\n",
                 opt.granularity.c_str());
    return kUsage;
  }
  if (!(opt.significance > 0 && opt.significance < 1)) {
    std::fprintf(stderr, "tally: error: --significance must be between 0 and 1\n");
    return kUsage;
  }
  diff.top.nodes.inlines = !opt.no_inlines;
  diff.top.filters = opt.filters;
  diff.top.sample_index = opt.sample_index;
  diff.node_count = opt.node_count > 0 ? static_cast<size_t>(opt.node_count) : 0;
  diff.significance = opt.significance;

  auto base = read(opt.base_file, opt.symbolize);
  if (!base) return report(base.error());
  auto next = read(opt.new_file, opt.symbolize);
  if (!next) return report(next.error());
  auto result = analyze::compute_diff(*base, *next, diff);
  if (!result) return report(result.error());
  for (const std::string& w : result->warnings)
    std::fprintf(stderr, "tally: warning: %s\n", w.c_str());
  const std::string text = analyze::format_diff(*result);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kOk;
}

}  // namespace

void add_diff_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<DiffCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Per-function change from BASE to NEW: flat and cum as shares of each "
              "profile's own total, the change in percentage points, and a two-proportion "
              "z-test on the flat sample counts; changes with p below --significance are "
              "marked *. Largest flat changes first.");
  cmd->add_option("--nodecount", opt->node_count, "show at most N nodes (default: all)");
  cmd->add_option("--granularity", opt->granularity,
                  "aggregate by functions (default), files, lines or addresses");
  cmd->add_option("--significance", opt->significance,
                  "the p-value under which a change is marked (default 0.05)");
  cmd->add_option("--focus", opt->filters.focus,
                  "keep only samples whose stack has a frame matching REGEX");
  cmd->add_option("--ignore", opt->filters.ignore,
                  "drop samples whose stack has a frame matching REGEX");
  cmd->add_option("--hide", opt->filters.hide, "remove frames matching REGEX from the stacks");
  cmd->add_option("--show", opt->filters.show, "keep only frames matching REGEX in the stacks");
  cmd->add_option("--sample-index", opt->sample_index,
                  "the value to compare, by name (cpu, samples), type/unit or 0-based index; "
                  "default: the profile's default type, else the last");
  cmd->add_flag("--no-inlines", opt->no_inlines,
                "attribute inlined code to the function it was inlined into");
  add_symbolize_flags(cmd, opt->symbolize, "local");
  cmd->add_option("BASE", opt->base_file, "the base profile")->required();
  cmd->add_option("NEW", opt->new_file, "the new profile")->required();
  cmd->final_callback([opt, &run] { run = [opt] { return run_diff(*opt); }; });
}

}  // namespace tally::cli
