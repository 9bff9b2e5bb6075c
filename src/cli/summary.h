// Readable views of a profile in the model, for any format: the totals
// (`tally cat --summary`) and every sample, location, function and mapping (`tally cat`).
#pragma once

#include <string>

#include "core/profile.h"
#include "formats/format.h"

namespace tally::cli {

// `positions`, when counted, gives the locations, distinct stacks, call edges and jumps of
// a profile read by function (what the full read would have made).
void print_summary(const core::Profile& profile, const std::string& name, formats::Format format,
                   bool gzipped, const core::PositionCounts& positions = {});

void print_profile(const core::Profile& profile, const std::string& name, formats::Format format);

}  // namespace tally::cli
