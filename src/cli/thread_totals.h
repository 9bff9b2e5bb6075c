// `tally top --threads`: one row per thread (the samples' tid label) with its on-CPU time,
// its off-CPU time split by reason (the off-CPU samples' reason label) and its wall time,
// for profiles of tally record --off-cpu; for other profiles, the reported value per
// thread. The name filters (--focus, --ignore) choose the samples counted.
#pragma once

#include <string>

#include "analyze/name_filter.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::cli {

// `sample_index` names the value shown when the profile has no cpu / off-cpu / wall
// types ("" : the default type).
core::Expected<std::string> thread_totals_text(const core::Profile& profile,
                                               const analyze::NameFilters& filters,
                                               const std::string& sample_index);

}  // namespace tally::cli
