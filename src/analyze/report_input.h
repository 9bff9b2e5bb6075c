// The first steps of every report, before its own computation: read the profile (a file
// in any format, or a selection of the profile database that tally daemon keeps) and
// symbolize it as asked. Below the CLI so that `tally serve` reads a profile once the way
// the report commands do and then computes reports on it per request: the CLI maps its
// flags to these options (cli/report_flags.h) and prints the diagnostics.
#pragma once

#include <string>
#include <vector>

#include "collect/kernel_symbols.h"
#include "core/diagnostics.h"
#include "core/error.h"
#include "core/position_detail.h"
#include "core/profile.h"
#include "store/query.h"
#include "symbolize/symbolize.h"

namespace tally::analyze {

// How a report symbolizes the addresses its profile holds without names.
struct ReportSymbolize {
  bool enabled = true;                    // false: addresses stay addresses (--symbolize=none)
  std::vector<std::string> binary_paths;  // searched first, then $PPROF_BINARY_PATH, the recorded path
  // An address no binary resolves: named "[lib+0x12]" (reports), or left as an address
  // (convert, whose output a later symbolizer with the binaries may still resolve).
  bool name_unresolved = true;
  bool debuginfod = true;  // fetch missing debug files from $DEBUGINFOD_URLS
  unsigned threads = 0;    // 0: all cores
  bool explain_sources = false;  // -v: say where each binary's symbols came from
};

struct ReportInput {
  std::string file;   // the profile file, any format; "-" standard input. Unused with db.
  store::Selection db;  // db.db not empty: read this database selection instead of `file`
  ReportSymbolize symbolize;
  // functions: the report shows nothing finer than functions and files (no lines, no
  // addresses), so a reader may keep one location per function (core/position_detail.h).
  core::PositionDetail positions = core::PositionDetail::full;
};

// Reads the profile `input` names, not canonicalized (reports aggregate anyway), and
// symbolizes it. Warnings (unreadable binaries, lossy input, kernel frames left as
// offsets...) go to `diagnostics`, also when it fails.
core::Expected<core::Profile> read_report_input(const ReportInput& input,
                                                core::Diagnostics& diagnostics);

// The database selection as one profile: its kernel frames named from /proc/kallsyms when
// the profiled kernel is the running one, then symbolized as `symbolize` asks.
core::Expected<core::Profile> read_db_report_profile(const store::Selection& selection,
                                                     const ReportSymbolize& symbolize,
                                                     core::Diagnostics& diagnostics);

// Names the frames of the profile's "[kernel.kallsyms]" mappings (offsets from _text) from
// /proc/kallsyms when the mapping's build id is the running kernel's (the daemon's push too).
void name_kernel_frames(core::Profile& profile, core::Diagnostics& diagnostics);
// The same with kallsyms already read (the daemon keeps it) and the running kernel's build id.
void name_kernel_frames(core::Profile& profile, const collect::KernelSymbols& symbols,
                        const std::string& running_build_id, core::Diagnostics& diagnostics);

// The symbolizer's options for a report (simplified names).
symbolize::Options symbolize_options(const ReportSymbolize& symbolize);

// Symbolizes the profile's unsymbolized locations when `symbolize.enabled`, with pprof's
// simplified function names ("ns::f", as pprof shows and stores them).
core::Status symbolize_report_profile(core::Profile& profile, const ReportSymbolize& symbolize,
                                      core::Diagnostics& diagnostics);

}  // namespace tally::analyze
