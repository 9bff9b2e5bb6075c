// One path for every report command, as pprof's driver runs each report: read the profile
// (FILE or --db) and symbolize it (analyze/report_input.h, through report_flags.h), compute
// the report's result model, render it (text or SVG), print its warnings and write the
// output. A command keeps only its flags and its compute-and-render step; tally serve
// calls the same analyze/ reading and compute_* functions, so the CLI and the UI never
// compute a number differently.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/report_flags.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::cli {

// A report's compute-and-render step on the profile read: the rendered output, or an
// error. The warnings it adds are printed (on stderr) whether it fails or not.
using ReportStep = std::function<core::Expected<std::string>(const core::Profile& profile,
                                                             std::vector<std::string>& warnings)>;

// Where the output goes: "" standard output; otherwise a file written atomically
// (io::write_file_atomically, for which "-" is standard output too).
struct ReportOutput {
  std::string file;
};

// Checks that exactly one of FILE and --db is given, reads and symbolizes the profile as
// `flags` say, runs `step` and writes its output. Returns the exit code, errors reported.
int run_report(const std::string& file, const ReportFlags& flags, const ReportStep& step,
               const ReportOutput& output = {});

// The steps after reading, for a report that reads its profiles itself (diff: two).
int emit_report(const std::function<core::Expected<std::string>(std::vector<std::string>&)>& step,
                const ReportOutput& output = {});

}  // namespace tally::cli
