// A walk over the protobuf wire format of a pprof Profile, against the schema, without
// building the message: it tells whether bytes are a pprof profile at all (detection), and
// where exactly a malformed one breaks ("byte 1234: location: truncated field"), which
// libprotobuf's parser does not say.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace tally::pprof {

struct WireProblem {
  uint64_t offset = 0;
  std::string what;
  bool truncated = false;  // the message runs past the end of the input
};

// nullopt when `bytes` is a well-formed Profile message (unknown fields allowed).
std::optional<WireProblem> check_wire(std::span<const uint8_t> bytes);

// Strict: a well-formed Profile with at least one known field and no unknown top-level
// fields — random text or other binary formats essentially never pass. A profile cut short
// passes too when at least three complete fields, one a sub-message with content, precede
// the cut, so that reading it says where it ends instead of "unrecognised format".
bool looks_like_profile_message(std::span<const uint8_t> bytes);

}  // namespace tally::pprof
