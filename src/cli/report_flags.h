// What the report commands (top, peek, tree, traces, flame, diff) share: the flags that
// choose what is counted (--granularity, --focus/--ignore/--hide/--show,
// --label-focus/--label-ignore, --time-range, --sample-index,
// --no-inlines, --symbolize, --binary-path) and reading a profile for a report.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/nodes.h"
#include "cli/db_flags.h"
#include "cli/symbolize_flags.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::cli {

struct ReportFlags {
  std::string granularity = "functions";
  bool no_inlines = false;
  analyze::NameFilters filters;
  std::string sample_index;
  SymbolizeFlags symbolize;
  store::Selection db;  // --db DIR and its selection: read the profile database instead of FILE
  // The report shows source lines or instructions whatever --granularity says (list,
  // disasm): the profile is read with every position. Otherwise a report by functions or
  // files reads one location per function where the format allows (callgrind).
  bool shows_positions = false;
};

// Adds the flags to `cmd`; --granularity only when the report has it.
void add_report_flags(CLI::App* cmd, ReportFlags& flags, bool with_granularity = true);

// The node options the flags ask for; false (the error printed) for a bad --granularity.
bool node_options(const ReportFlags& flags, analyze::NodeOptions& nodes);

// Reads FILE (any format, "-" for stdin) for a report, or the database selection when
// --db is given: analyze::read_report_input with what the flags ask. Warnings are printed.
core::Expected<core::Profile> read_report_profile(const std::string& file, const ReportFlags& flags);

}  // namespace tally::cli
