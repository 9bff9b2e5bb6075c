// A serialized Profile message rendered as text from the wire bytes alone (the tests' own
// decoder and the public field numbers), with every id and string index resolved to what
// it refers to, and samples and labels sorted. Two messages that mean the same profile
// render the same, however their ids, string tables and orders differ; a field lost or
// changed on the way shows as a changed line.
#pragma once

#include <string>

namespace tally::test {

// `bytes` is the uncompressed message. Throws std::runtime_error on a malformed message or
// a dangling id or string index.
std::string profile_text(const std::string& bytes);

}  // namespace tally::test
