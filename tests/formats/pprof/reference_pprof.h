// The reference that tally's pprof codec is compared with: libprotobuf (the classes protoc
// generates from proto/profile.proto) for the wire format, and a plain converter between
// that message and core::Profile written here from the schema's comments, field by field,
// sharing no code with src/formats/pprof. Used by the differential tests and by
// fuzz/fuzz_pprof.cc, so it depends on neither GoogleTest nor zlib.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/profile.h"
#include "profile.pb.h"

namespace tally::test::reference {

using Message = perftools::profiles::Profile;

// libprotobuf's parse of an uncompressed message; nullopt when libprotobuf refuses it.
std::optional<Message> parse(std::string_view bytes);

// The message as a model, not canonicalized: every string of the table interned in order,
// mappings, functions and locations added in message order, samples in message order.
// Refuses what pprof's rules forbid: string_table[0] not "", an id 0 or used twice, a
// reference to a missing id or string, a sample whose value count differs from the
// sample types'. Error messages are this file's own, not tally's.
core::Expected<core::Profile> to_profile(const Message& message);

// parse + to_profile + canonicalize: what read_profile must give for uncompressed bytes.
core::Expected<core::Profile> read_profile(std::string_view bytes);

// The message of a profile: a canonicalized copy, ids 1..N in the model's order, the
// string table as it is, period_type present only when it names something.
Message from_profile(core::Profile profile);

// libprotobuf's deterministic serialization.
std::string serialize(const Message& message);

}  // namespace tally::test::reference
