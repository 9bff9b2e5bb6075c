// pprof's profile.proto (proto/profile.proto): a gzip-compressed serialized
// perftools.profiles.Profile, read straight into core::Profile and written straight from
// it. The model is pprof's, so nothing is lost either way.
//
// No libprotobuf objects on this path: a 100 MB profile decodes into millions of small
// messages (2.5 GB for 361 MB of input), which was most of the time and memory. The
// generated classes of proto/profile.proto are the independent reference the tests
// compare this codec against.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::pprof {

// True for a bare Profile message (detection runs on inflated bytes), including one cut
// short after a few complete fields, so that it gets a "truncated" error, not "unknown".
bool looks_like_pprof(std::span<const uint8_t> bytes);

// Gzipped or plain bytes to the model, in canonical order (for a profile written by
// google/pprof: its own order, so writing it again gives the same message). Everything is
// validated: the wire format (errors give the byte offset), ids unique and nonzero, every
// referenced id and string index present, string_table[0] == "", one value per sample type.
core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes,
                                           const std::string& source,
                                           core::Diagnostics& diagnostics);

// read_profile without its final canonicalize(): for a caller that frees the input bytes
// first (the input and the model's working memory are a big profile's peak together).
core::Expected<core::Profile> decode_profile(std::span<const uint8_t> bytes,
                                             const std::string& source,
                                             core::Diagnostics& diagnostics);

// The serialized message, uncompressed, of the profile in canonical order: the same bytes
// libprotobuf's deterministic serialization gives (fields in number order, repeated
// scalars packed, zero values omitted).
// Taken by value: pass an rvalue to spare a copy of a big profile.
std::string encode_profile(core::Profile profile);

// encode_profile, gzipped (level 6, as Go's pprof), compressed on every core: the output
// is one gzip member per 8 MB of message, which every gzip reader (Go's included) reads as
// one stream.
std::string write_profile(core::Profile profile);

}  // namespace tally::pprof
