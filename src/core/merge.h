// Merging profiles: `tally merge`, and anything that sums several collections. Samples are
// summed where stacks and labels agree; mappings of the same file (path, build id and file
// offset) become one, and the locations of later profiles are relocated to the first
// profile's load address of that file (two runs of one binary under ASLR load it at
// different addresses). Header data combines as google/pprof does: earliest time, summed
// durations, the largest period, comments of all.
#pragma once

#include <vector>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::core {

// All profiles must have the same sample types (type and unit, in order).
Expected<Profile> merge_profiles(const std::vector<const Profile*>& profiles,
                                 Diagnostics& diagnostics);

}  // namespace tally::core
