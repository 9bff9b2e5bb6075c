// The `list` report (pprof -list REGEX): the source of every function whose name matches
// REGEX, each line with its flat and cum, in pprof's layout ("Total:", one "ROUTINE ====
// NAME in FILE" block per function and source file, from the function's first line (or 5
// lines before its first sampled line) to 5 lines after its last sampled one). Nodes are
// pprof's at line granularity: inlined code is listed under the inlined function and its
// own file unless --no-inlines. When a source file cannot be found the block says so and
// still shows each sampled line's numbers.
//
// On a call-graph profile (callgrind) flat is the line's self cost and cum adds the
// inclusive cost of the calls made on that line, as callgrind_annotate annotates source
// (its "=> callee" lines).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/source_files.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct ListOptions {
  std::string regex;  // searched in the function names
  bool inlines = true;
  NameFilters filters;
  std::string sample_index;
};

struct ListLine {
  int64_t line = 0;
  int64_t flat = 0;
  int64_t cum = 0;
  std::string text;  // "" when the file was not found
};

struct ListRoutine {
  std::string name;
  std::string file;  // as shown; "" when the function has no source information
  int64_t flat = 0;
  int64_t cum = 0;
  std::string error;  // why the source file could not be read ("" when it was)
  std::vector<ListLine> lines;
};

struct ListReport {
  std::string sample_unit;
  int64_t total = 0;
  std::vector<ListRoutine> routines;  // by name, then file
  std::vector<std::string> warnings;
};

// An invalid regex, or one that matches no function with samples, is an invalid_input error.
core::Expected<ListReport> compute_list(const core::Profile& profile, const ListOptions& options,
                                        SourceFiles& sources);

std::string format_list(const ListReport& report);

}  // namespace tally::analyze
