// The pprof reader on any bytes, against the reference (tests/formats/pprof/
// reference_pprof.h: libprotobuf's parse + a converter written from the schema):
// - what the wire walker accepts, libprotobuf parses; detection claims only well-formed or
//   cut-short messages;
// - read_profile's verdict is the reference's (where the walker accepts: it is stricter
//   than libprotobuf on purpose, e.g. a known field with the wrong wire type), and when
//   both read, the same profile (compared by content); decode_profile + canonicalize gives
//   the same profile too;
// - on success, encode_profile gives libprotobuf's deterministic serialization of the
//   reference's message for the profile, which reads back to the same profile and encodes
//   to the same bytes again; write_profile inflates to those bytes.
// gzip input is inflated first, with a 16 MB limit (a gzip bomb would only measure the
// fuzzer's memory).
#include <cstdint>
#include <string>

#include "core/diagnostics.h"
#include "formats/pprof/pprof.h"
#include "formats/pprof/pprof_wire.h"
#include "fuzz_check.h"
#include "io/gzip.h"
#include "profile_content.h"
#include "reference_pprof.h"

using namespace tally;

namespace {

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  std::vector<uint8_t> inflated;
  if (io::is_gzip(bytes)) {
    auto out = io::gunzip(bytes, "fuzz", uint64_t(16) << 20);
    if (!out) return 0;
    inflated = std::move(*out);
    bytes = inflated;
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());

  const auto problem = pprof::check_wire(bytes);
  if (problem) FUZZ_CHECK(problem->offset <= bytes.size(), "the offset lies inside the input");
  const auto message = test::reference::parse(text);
  if (!problem) FUZZ_CHECK(message.has_value(), "what the walker accepts, libprotobuf parses");
  const bool detected = pprof::looks_like_pprof(bytes);
  FUZZ_CHECK(!detected || !problem || problem->truncated,
             "detection claims only well-formed or cut-short messages");

  core::Diagnostics diagnostics;
  auto profile = pprof::read_profile(bytes, "fuzz", diagnostics);
  auto decoded = pprof::decode_profile(bytes, "fuzz", diagnostics);
  FUZZ_CHECK(profile.has_value() == decoded.has_value(), "decode_profile agrees with read_profile");
  if (problem || !message) {
    FUZZ_CHECK(!profile, "read_profile refuses what the walker or libprotobuf refuses");
    return 0;
  }
  auto expected = test::reference::to_profile(*message);
  FUZZ_CHECK(profile.has_value() == expected.has_value(),
             "read_profile accepts exactly what the reference accepts");
  if (!profile) {
    FUZZ_CHECK(!profile.error().message.empty(), "an error says something");
    return 0;
  }
  expected->canonicalize();
  const std::string content = test::profile_content(*profile);
  FUZZ_CHECK(content == test::profile_content(*expected), "read_profile reads what the reference reads");
  decoded->canonicalize();
  FUZZ_CHECK(test::profile_content(*decoded) == content, "decode_profile + canonicalize is read_profile");

  const std::string encoded = pprof::encode_profile(*profile);
  FUZZ_CHECK(encoded == test::reference::serialize(test::reference::from_profile(*profile)),
             "encode_profile is libprotobuf's serialization of the reference message");
  auto reread = pprof::read_profile(as_bytes(encoded), "encoded", diagnostics);
  FUZZ_CHECK(reread.has_value(), "tally reads what it encoded");
  FUZZ_CHECK(test::profile_content(*reread) == content, "encode + read keeps the profile");
  FUZZ_CHECK(pprof::encode_profile(*reread) == encoded, "encoding what was read back gives the same bytes");
  auto by_reference = test::reference::read_profile(encoded);
  FUZZ_CHECK(by_reference.has_value() && test::profile_content(*by_reference) == content,
             "the reference reads the encoding as the same profile");

  const std::string written = pprof::write_profile(std::move(*profile));
  auto unzipped = io::gunzip(as_bytes(written), "written");
  FUZZ_CHECK(unzipped.has_value() &&
                 std::string_view(reinterpret_cast<const char*>(unzipped->data()), unzipped->size()) == encoded,
             "write_profile is encode_profile gzipped");
  return 0;
}
