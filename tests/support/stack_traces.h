// The stacks of a `tally traces` (or `pprof -traces`) output, for tests that check who
// called whom.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tally::test {

// Every stack, leaf first (its value and label lines left out). A stack ends at its
// separator line or at a line that starts in the first column (such as the next image's
// "File:" header in a database report).
std::vector<std::vector<std::string>> traces(const std::string& text);

// True when some stack with leaf `leaf` has `callers` in this order (not necessarily
// adjacent unless `adjacent`).
bool has_stack(const std::vector<std::vector<std::string>>& stacks, const std::string& leaf,
               const std::vector<std::string>& callers, bool adjacent);

// The stacks of a `pprof -traces` output ("  23ms   leaf", then a caller per line) as folded
// stacks: frames root first joined by ';', each with its time in milliseconds, equal
// stacks summed.
std::map<std::string, int64_t> folded_ms_from_pprof_traces(const std::string& text);

}  // namespace tally::test
