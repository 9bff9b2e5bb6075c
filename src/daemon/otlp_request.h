// The body of an OTLP/HTTP profiles export: ExportProfilesServiceRequest of
// opentelemetry-proto v1.11.0's profiles signal (proto/otlp), written with tally's own wire
// writer. One ResourceProfiles per set of resource attributes (service.name, host.name, the
// --label pairs), one ScopeProfiles ("tally") in each, and per tally profile one OTLP Profile
// per sample type (an OTLP Profile has one). Every table the profiles point into (strings,
// mappings, locations, functions, stacks, attributes) is the request's one shared
// dictionary, entries deduplicated by value, entry 0 the zero value as the format requires.
#pragma once

#include <string>
#include <vector>

#include "core/profile.h"
#include "daemon/push_request.h"

namespace tally::daemon {

struct OtlpProfile {
  std::vector<Label> resource;  // resource attributes, string values
  core::Profile profile;        // symbolized: the store has no access to the binaries
};

// The serialized request (not compressed). Sample labels become sample attributes, build
// ids the mapping attribute process.executable.build_id.gnu.
std::string encode_otlp_request(std::vector<OtlpProfile> profiles);

// The resource attributes of a profile in a fixed order: service.name, host.name, then
// `extra` (a --label pair of the same name replaces the one before it).
std::vector<Label> otlp_resource(const std::string& service, const std::string& host,
                                 const std::vector<Label>& extra);

}  // namespace tally::daemon
