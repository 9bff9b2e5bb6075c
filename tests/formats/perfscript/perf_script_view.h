// Test-side views of a profile read from `perf script` text: frame names per sample, leaf
// totals, labels. Written against core::Profile only, so that the tests compare the model
// with numbers counted independently (awk over the files, perf report's own output).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::test {

core::Expected<core::Profile> read_perf_script_text(std::string_view text,
                                                    core::Diagnostics& diagnostics,
                                                    const std::string& source = "test.txt");
core::Expected<core::Profile> read_perf_script_file(const std::string& path);

// Function names of a sample's frames, leaf first; a location's inline chain is expanded
// innermost first, and a location without lines shows as "[unknown]".
std::vector<std::string> frame_names(const core::Profile& p, size_t sample);
// The same with system names (as printed by perf).
std::vector<std::string> frame_system_names(const core::Profile& p, size_t sample);
// frame_names(p, sample)[0], or "" for an empty stack.
std::string leaf_name(const core::Profile& p, size_t sample);
// Sum of values of sample type `value` per leaf function name.
std::map<std::string, int64_t> leaf_totals(const core::Profile& p, size_t value);

std::optional<int64_t> num_label(const core::Profile& p, size_t sample, std::string_view key);
std::string str_label(const core::Profile& p, size_t sample, std::string_view key);

// Sum of values of sample type `value` over the samples whose labels match.
int64_t total_where(const core::Profile& p, size_t value, std::string_view comm,
                    std::optional<int64_t> tid = std::nullopt);

std::vector<std::string> sample_type_names(const core::Profile& p);  // "cpu-clock/nanoseconds"

}  // namespace tally::test
