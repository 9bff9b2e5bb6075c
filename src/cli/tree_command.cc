// `tally tree FILE`: pprof -tree, every node with its callers and callees (stack profiles).
#include <cstdio>
#include <memory>

#include "analyze/tree.h"
#include "cli/command.h"
#include "cli/symbolize_flags.h"
#include "formats/format.h"
#include "io/input.h"

namespace tally::cli {

namespace {

struct TreeCommandOptions {
  std::string file;
  int node_count = 80;
  bool cum = false;
  std::string granularity = "functions";
  bool no_inlines = false;
  analyze::NameFilters filters;
  std::string sample_index;
  SymbolizeFlags symbolize;
};

int run_tree(const TreeCommandOptions& opt) {
  analyze::TreeOptions tree;
  if (!analyze::parse_granularity(opt.granularity, tree.nodes.granularity)) {
    std::fprintf(stderr,
                 "tally: error: --granularity must be functions, files, lines or addresses, "
                 "not '%s'\n",
                 opt.granularity.c_str());
    return kUsage;
  }
  tree.node_count = opt.node_count > 0 ? static_cast<size_t>(opt.node_count) : 0;
  tree.sort_by_cum = opt.cum;
  tree.nodes.inlines = !opt.no_inlines;
  tree.filters = opt.filters;
  tree.sample_index = opt.sample_index;

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
  auto result = analyze::compute_tree(*profile, tree);
  if (!result) return report(result.error());
  for (const std::string& w : result->summary.warnings)
    std::fprintf(stderr, "tally: warning: %s\n", w.c_str());
  const std::string text = analyze::format_tree(*result);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kOk;
}

}  // namespace

void add_tree_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<TreeCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tree", "Every function with its callers above and its callees below, with the cost "
              "of each edge, as pprof -tree prints them. Stack profiles only.");
  cmd->add_option("--nodecount", opt->node_count, "show at most N nodes (default: 80; 0: all)");
  cmd->add_flag("--cum", opt->cum, "order nodes by cum instead of flat");
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
  cmd->final_callback([opt, &run] { run = [opt] { return run_tree(*opt); }; });
}

}  // namespace tally::cli
