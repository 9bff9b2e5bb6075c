// From a profile to what a push carries: the series labels (__name__, service_name,
// hostname, the user's --label pairs) and the raw sample (a gzipped pprof with a fresh id).
#pragma once

#include <string>
#include <vector>

#include "core/profile.h"
#include "daemon/push_request.h"

namespace tally::daemon {

// Pyroscope's profile type of a profile: "process_cpu" for CPU time, cycles or samples of a
// clock, else the name of its default sample type.
std::string profile_type_name(const core::Profile& profile);

// The series labels in a fixed order: __name__, service_name, hostname, then `extra` (a
// --label pair of the same name replaces the one before it).
std::vector<Label> series_labels(const std::string& profile_type, const std::string& service,
                                 const std::string& host, const std::vector<Label>& extra);

// The profile as a raw sample: pprof, gzipped, with a new UUID.
RawSample raw_sample(core::Profile profile);

}  // namespace tally::daemon
