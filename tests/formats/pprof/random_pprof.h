// Random pprof content for the differential tests, reproducible from a seed: profiles built
// directly in the model, valid messages built with libprotobuf's generated classes, and
// other encodings of the same message (fields interleaved, repeated scalars unpacked, a
// sub-message split in two) that every protobuf parser must read the same.
#pragma once

#include <cstdint>
#include <string>

#include "core/profile.h"
#include "reference_pprof.h"

namespace tally::test {

// A profile with every kind of content: strings that are empty, repeated or not UTF-8,
// unused mappings and functions, equal locations, repeated stacks, zero, negative and
// extreme values, string and numeric labels, every header field.
core::Profile random_profile(uint64_t seed);

// A valid message: ids sparse and unordered (up to 2^64 - 1), references resolved, string
// indices in range (repeated strings included), every field set somewhere.
reference::Message random_message(uint64_t seed);

// `serialized` (libprotobuf's output) re-encoded: top-level fields interleaved at random
// (fields of one number keep their order), packed repeated scalars written unpacked or
// packed at random, period_type written as two halves. The same message to any parser.
std::string reencoded(const std::string& serialized, uint64_t seed);

}  // namespace tally::test
