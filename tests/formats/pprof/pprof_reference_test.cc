// tally's pprof codec against libprotobuf, the reference (reference_pprof.h):
// - encode_profile gives, byte for byte, libprotobuf's deterministic serialization of the
//   message the reference converter builds from the same profile, and libprotobuf parses
//   it back to that profile;
// - read_profile gives the profile that libprotobuf's parse + the reference converter +
//   canonicalize give,
// on google/pprof's fixtures, speedscope's Go profile, the every-field message, random
// profiles built in the model and random valid messages in several encodings.
#include <gtest/gtest.h>

#include "core/diagnostics.h"
#include "every_field_message.h"
#include "formats/pprof/pprof.h"
#include "pprof_test_helpers.h"
#include "profile_content.h"
#include "random_pprof.h"
#include "reference_pprof.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

constexpr uint64_t kRandomCases = 300;

// Where two byte strings first differ, or "" when they are equal (printing two whole
// messages would bury the difference).
std::string first_difference(const std::string& actual, const std::string& expected) {
  if (actual == expected) return "";
  size_t i = 0;
  while (i < actual.size() && i < expected.size() && actual[i] == expected[i]) ++i;
  auto hex = [](const std::string& s, size_t from) {
    std::string out;
    for (size_t k = from; k < s.size() && k < from + 16; ++k) {
      static const char* const kDigits = "0123456789abcdef";
      out += kDigits[uint8_t(s[k]) >> 4];
      out += kDigits[uint8_t(s[k]) & 15];
      out += ' ';
    }
    return out;
  };
  return "sizes " + std::to_string(actual.size()) + " and " + std::to_string(expected.size()) +
         "; first difference at byte " + std::to_string(i) + ": " + hex(actual, i) + "vs " +
         hex(expected, i);
}

// Named files, uncompressed.
std::vector<std::pair<std::string, std::string>> files() {
  std::vector<std::pair<std::string, std::string>> out = {{"every field", every_field_message()}};
  for (const std::string& name : pprof_proto_fixture_names())
    out.emplace_back(name, gunzip_bytes(read_text(pprof_proto_fixture_path(name))));
  out.emplace_back("speedscope",
                   gunzip_bytes(read_text(shared("conformance/pprof/speedscope/simple.prof"))));
  return out;
}

core::Expected<core::Profile> read(const std::string& bytes) {
  core::Diagnostics diagnostics;
  return pprof::read_profile(bytes_of(bytes), "test.pb", diagnostics);
}

// The encoding checks for one profile.
void expect_encoding_as_libprotobuf(const core::Profile& p, const std::string& what) {
  const std::string encoded = pprof::encode_profile(p);
  const reference::Message message = reference::from_profile(p);
  EXPECT_EQ(first_difference(encoded, reference::serialize(message)), "") << what;
  auto parsed = reference::parse(encoded);
  ASSERT_TRUE(parsed) << what << ": libprotobuf cannot parse the encoding";
  EXPECT_EQ(parsed->SerializeAsString(), message.SerializeAsString()) << what;
  // And the message means the profile: the reference reads back its canonical form.
  core::Profile canonical = p;
  canonical.canonicalize();
  auto reread = reference::read_profile(encoded);
  ASSERT_TRUE(reread) << what << ": " << reread.error().message;
  EXPECT_EQ(profile_content(*reread), profile_content(canonical)) << what;
}

// The reading checks for one uncompressed message.
void expect_read_as_reference(const std::string& bytes, const std::string& what) {
  auto expected = reference::read_profile(bytes);
  ASSERT_TRUE(expected) << what << ": the reference refuses it: " << expected.error().message;
  auto actual = read(bytes);
  ASSERT_TRUE(actual) << what << ": " << actual.error().message;
  EXPECT_EQ(profile_content(*actual), profile_content(*expected)) << what;
}

TEST(PprofReference, EncodingOfEveryFileIsLibprotobufs) {
  for (const auto& [name, bytes] : files()) {
    auto p = read(bytes);
    ASSERT_TRUE(p) << name << ": " << p.error().message;
    expect_encoding_as_libprotobuf(*p, name);
  }
}

TEST(PprofReference, EncodingOfRandomProfilesIsLibprotobufs) {
  size_t shrunk = 0, negative = 0;
  for (uint64_t seed = 1; seed <= kRandomCases; ++seed) {
    const core::Profile p = random_profile(seed);
    expect_encoding_as_libprotobuf(p, "random profile " + std::to_string(seed));
    core::Profile canonical = p;
    canonical.canonicalize();
    shrunk += canonical.sample_count() < p.sample_count();
    for (size_t i = 0; i < p.sample_count(); ++i)
      for (int64_t v : p.values(i)) negative += v < 0;
  }
  // The generator did exercise merging (or dropping) samples and the 10-byte encodings of
  // negative values.
  EXPECT_GT(shrunk, kRandomCases / 4);
  EXPECT_GT(negative, kRandomCases);
}

TEST(PprofReference, EncodingOfEdgeProfilesIsLibprotobufs) {
  core::Profile empty;
  expect_encoding_as_libprotobuf(empty, "the empty profile");
  EXPECT_EQ(pprof::encode_profile(empty), std::string("\x32\x00", 2))
      << "only string_table[0]: field 6, length 0";

  core::Profile header;
  header.period_type = header.value_type("", "nanoseconds");  // a type of "" still counts
  header.period = -1;
  header.time_nanos = INT64_MIN;
  header.comments = {0, header.intern("x"), 0};
  expect_encoding_as_libprotobuf(header, "header fields only");

  core::Profile no_frames;  // samples without a stack, and one with all-zero values
  no_frames.sample_types = {no_frames.value_type("samples", "count")};
  const int64_t one = 1, zero = 0;
  no_frames.add_sample({}, std::span(&one, 1));
  no_frames.add_sample({}, std::span(&zero, 1));
  expect_encoding_as_libprotobuf(no_frames, "stackless samples");
}

TEST(PprofReference, ReadingOfEveryFileIsTheReferences) {
  for (const auto& [name, bytes] : files()) expect_read_as_reference(bytes, name);
}

TEST(PprofReference, ReadingOfRandomMessagesIsTheReferences) {
  size_t reordered = 0;
  for (uint64_t seed = 1; seed <= kRandomCases; ++seed) {
    const std::string what = "random message " + std::to_string(seed);
    const std::string bytes = reference::serialize(random_message(seed));
    expect_read_as_reference(bytes, what);
    // The same message with its fields interleaved, unpacked, split: the same profile.
    const std::string other = reencoded(bytes, seed);
    reordered += other != bytes;
    auto a = reference::parse(other);
    ASSERT_TRUE(a) << what;
    EXPECT_EQ(a->SerializeAsString(), bytes) << what << ": the re-encoding changed the message";
    expect_read_as_reference(other, what + " re-encoded");
  }
  EXPECT_GT(reordered, kRandomCases * 9 / 10);
}

TEST(PprofReference, ReadingOfEncodedRandomProfilesIsTheReferences) {
  // Round trip: encode, then read back, and the reference's reading of those bytes agrees.
  for (uint64_t seed = 1; seed <= kRandomCases; ++seed) {
    core::Profile p = random_profile(seed);
    const std::string bytes = pprof::encode_profile(p);
    expect_read_as_reference(bytes, "random profile " + std::to_string(seed));
    p.canonicalize();
    auto back = read(bytes);
    ASSERT_TRUE(back);
    EXPECT_EQ(profile_content(*back), profile_content(p)) << seed;
  }
}

}  // namespace
}  // namespace tally::test
