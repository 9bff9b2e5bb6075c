// The text layout of `tally top`: pprof -top's header lines and columns (flat, flat%,
// sum%, cum, cum%), then tally's ± column (95% confidence interval of flat%), then the name.
#pragma once

#include <string>
#include <vector>

#include "analyze/top.h"

namespace tally::analyze {

// pprof's header lines: File, Build ID, comments, Type, Time, Duration, Active filters,
// "Showing nodes accounting for ...", "Dropped N nodes (cum <= X)", "Showing top N ...".
std::vector<std::string> top_header(const TopReport& report);

// The whole report, header then table, each line ending in '\n'.
std::string format_top(const TopReport& report);

// A value as the report prints it (in report.output_unit).
std::string format_value(const TopReport& report, int64_t value);

}  // namespace tally::analyze
