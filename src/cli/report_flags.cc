#include "cli/report_flags.h"

#include <malloc.h>

#include <cstdio>

#include "analyze/report_input.h"
#include "cli/command.h"

namespace tally::cli {

void add_report_flags(CLI::App* cmd, ReportFlags& flags, bool with_granularity) {
  if (with_granularity)
    cmd->add_option("--granularity", flags.granularity,
                    "aggregate by functions (default), files, lines or addresses");
  cmd->add_option("--focus", flags.filters.focus,
                  "keep only samples whose stack has a frame matching REGEX");
  cmd->add_option("--ignore", flags.filters.ignore,
                  "drop samples whose stack has a frame matching REGEX");
  cmd->add_option("--hide", flags.filters.hide, "remove frames matching REGEX from the stacks");
  cmd->add_option("--show", flags.filters.show, "keep only frames matching REGEX in the stacks");
  cmd->add_option("--label-focus", flags.filters.labels.focus,
                  "keep only samples with a label KEY whose value matches: a number or range "
                  "N, N:, :N, N:M for numeric labels (pid, tid, cpu), else comma-separated "
                  "regexes for string labels (comm); repeatable, all must match "
                  "(pprof's -tagfocus)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);  // one filter per flag: a FILE after it stays the FILE
  cmd->add_option("--label-ignore", flags.filters.labels.ignore,
                  "drop samples with a label KEY whose value matches, as --label-focus; "
                  "repeatable (pprof's -tagignore)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);  // one filter per flag: a FILE after it stays the FILE
  cmd->add_option_function<std::string>(
         "--time-range",
         [&flags](const std::string& text) {
           auto range = analyze::parse_time_range(text);
           if (!range) throw CLI::ValidationError("--time-range", range.error().message);
           flags.filters.time = std::move(*range);
         },
         "keep only samples whose time overlaps START:END, in seconds from the profile's start "
         "(0.2:0.4, 1.5:, :2); needs timestamps (tally record --off-cpu)")
      ->type_name("START:END");
  cmd->add_option("--sample-index", flags.sample_index,
                  "the value to report, by name (cpu, samples), type/unit or 0-based index; "
                  "default: the profile's default type, else the last");
  cmd->add_flag("--no-inlines", flags.no_inlines,
                "attribute inlined code to the function it was inlined into");
  add_symbolize_flags(cmd, flags.symbolize, "local");
  add_db_flags(cmd, flags.db);
}

bool node_options(const ReportFlags& flags, analyze::NodeOptions& nodes) {
  if (!analyze::parse_granularity(flags.granularity, nodes.granularity)) {
    std::fprintf(stderr,
                 "tally: error: --granularity must be functions, files, lines or addresses, "
                 "not '%s'\n",
                 flags.granularity.c_str());
    return false;
  }
  nodes.inlines = !flags.no_inlines;
  return true;
}

core::Expected<core::Profile> read_report_profile(const std::string& file, const ReportFlags& flags) {
  // A report builds a few big arrays (the inflated input, per-location tables, the
  // symbolizer's indexes) and frees each once. glibc raises its mmap threshold to the size
  // of the first big block freed, so the later ones come from the heap and their freed
  // pages stay in the peak; a fixed threshold returns each to the kernel when freed
  // (1M-sample clang profile: `tally top` peak RSS 53 MB -> 50 MB, no slower).
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  core::Diagnostics diagnostics;
  analyze::NodeOptions nodes;
  const bool by_function =
      !flags.shows_positions && analyze::parse_granularity(flags.granularity, nodes.granularity) &&
      (nodes.granularity == analyze::Granularity::functions ||
       nodes.granularity == analyze::Granularity::files);
  auto profile = analyze::read_report_input(
      {.file = file,
       .db = flags.db,
       .symbolize = report_symbolize(flags.symbolize),
       .positions = by_function ? core::PositionDetail::functions : core::PositionDetail::full},
      diagnostics);
  print_warnings(diagnostics);
  return profile;
}

}  // namespace tally::cli
