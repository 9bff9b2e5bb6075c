// `tally flame FILE -o out.svg`: an interactive SVG flame graph written by tally itself
// (analyze/flame_tree.h merges the stacks, analyze/flame_svg.h draws them).
#include <cstdio>
#include <memory>

#include "analyze/flame_svg.h"
#include "analyze/flame_tree.h"
#include "cli/command.h"
#include "cli/report_driver.h"

namespace tally::cli {

namespace {

struct FlameCommandOptions {
  std::string file;
  std::string output;
  analyze::FlameSvgOptions svg;
  ReportFlags report;
};

int run_flame(const FlameCommandOptions& opt) {
  if (opt.svg.width < 100 || opt.svg.width > 100000) {
    std::fprintf(stderr, "tally: error: --width must be between 100 and 100000 pixels\n");
    return kUsage;
  }
  analyze::FlameTreeOptions tree_options;
  tree_options.nodes.inlines = !opt.report.no_inlines;
  tree_options.filters = opt.report.filters;
  tree_options.sample_index = opt.report.sample_index;
  tree_options.min_fraction = analyze::min_frame_fraction(opt.svg);
  return run_report(
      opt.file, opt.report,
      [&](const core::Profile& profile,
          std::vector<std::string>& warnings) -> core::Expected<std::string> {
        auto tree = analyze::build_flame_tree(profile, tree_options);
        if (!tree) return tree.error();
        warnings = tree->warnings;
        if (tree->total() <= 0)
          return core::Error{"no samples with a positive value to draw",
                             core::ErrorKind::unsupported};
        return analyze::render_flame_svg(*tree, opt.svg);
      },
      {.file = opt.output});
}

}  // namespace

void add_flame_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<FlameCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "flame", "An interactive SVG flame graph (root at the bottom, callees above their "
               "callers): click a frame to zoom, Search (or Ctrl-F, or file.svg#s=REGEX) to "
               "highlight matching frames with their share, hover for details. Frames "
               "narrower than 0.1 px are merged into their parent.");
  cmd->add_option("-o,--output", opt->output, "the SVG file, - for standard output")
      ->required();
  cmd->add_option("--title", opt->svg.title, "the title at the top (default: Flame Graph)");
  cmd->add_option("--width", opt->svg.width, "the image width in pixels (default: 1200)");
  add_report_flags(cmd, opt->report, /*with_granularity=*/false);
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input (or --db DIR)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_flame(*opt); }; });
}

}  // namespace tally::cli
