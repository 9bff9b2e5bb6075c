// The symbolization flags shared by the commands that read profiles (convert, top, ...):
// --binary-path DIR (repeatable) and, per command, whether symbolizing is on by default.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "analyze/report_input.h"
#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::cli {

struct SymbolizeFlags {
  std::string mode;  // "local" or "none"
  std::vector<std::string> binary_paths;
  // Addresses no binary resolves: named "[lib+0x12]" (reports), or left as addresses
  // (convert, whose output a later symbolizer with the binaries may still resolve).
  bool name_unresolved = true;
  bool no_debuginfod = false;  // no debug files from $DEBUGINFOD_URLS
  bool verbose = false;        // -v: where each binary's symbols came from
};

// Adds --symbolize MODE (default `default_mode`, described as `default_text` in --help when
// not empty), --binary-path DIR, --no-debuginfod and -v to `cmd`.
void add_symbolize_flags(CLI::App* cmd, SymbolizeFlags& flags, const std::string& default_mode,
                         const std::string& default_text = "");

// What the flags ask of symbolization, as analyze's report input takes it.
analyze::ReportSymbolize report_symbolize(const SymbolizeFlags& flags);

// Symbolizes the profile's unsymbolized locations when the mode asks for it, with pprof's
// simplified function names ("ns::f", as pprof shows and stores them).
core::Status apply_symbolize_flags(const SymbolizeFlags& flags, core::Profile& profile,
                                   core::Diagnostics& diagnostics);

}  // namespace tally::cli
