// The wire walker and read_profile on malformed protobuf: each broken message gives an error
// at the exact byte where it breaks (offsets computed from the test's own encoder), and no
// truncation or corruption of a real profile crashes the reader or makes it disagree with
// libprotobuf and the reference converter (reference_pprof.h).
#include <gtest/gtest.h>

#include "core/diagnostics.h"
#include "formats/pprof/pprof.h"
#include "formats/pprof/pprof_wire.h"
#include "pprof_schema.h"
#include "pprof_test_helpers.h"
#include "profile_content.h"
#include "proto_wire.h"
#include "reference_pprof.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

namespace P = schema::profile;
using wire::Writer;

// string_table "", "samples", "count": 1 + 1 + 1 + 1 + 7 + 1 + 1 + 5 = 18 bytes.
Writer strings_prefix() {
  Writer w;
  w.bytes(P::string_table, "").bytes(P::string_table, "samples").bytes(P::string_table, "count");
  return w;
}

std::optional<pprof::WireProblem> check(const std::string& bytes) {
  return pprof::check_wire(bytes_of(bytes));
}

core::Expected<core::Profile> read(const std::string& bytes, const std::string& source) {
  core::Diagnostics diagnostics;
  return pprof::read_profile(bytes_of(bytes), source, diagnostics);
}

TEST(PprofWire, AWellFormedMessageHasNoProblem) {
  Writer w = strings_prefix();
  w.message(P::sample_type, Writer().varint(1, 1).varint(2, 2))
      .message(P::sample, Writer().packed(1, {1}).varint(2, 5))
      .varint(P::time_nanos, 123);
  EXPECT_EQ(check(w.str()), std::nullopt);
  EXPECT_EQ(check(""), std::nullopt) << "the empty message is well-formed";
}

TEST(PprofWire, LengthPastTheEndIsReportedAtItsTag) {
  Writer w = strings_prefix();
  ASSERT_EQ(w.size(), 18u);
  w.raw(Writer::encode_varint(P::string_table << 3 | 2)).raw(Writer::encode_varint(100)).raw("abc");
  auto problem = check(w.str());
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->offset, 18u);
  EXPECT_NE(problem->what.find("claims 100 bytes, only 3 remain"), std::string::npos) << problem->what;
}

TEST(PprofWire, TruncatedVarintIsReportedAtItsFirstByte) {
  Writer w = strings_prefix();
  w.raw(Writer::encode_varint(P::time_nanos << 3 | 0)).raw("\x80\x80");  // tag at 18, value at 19
  auto problem = check(w.str());
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->offset, 19u);
  EXPECT_NE(problem->what.find("truncated or overlong varint"), std::string::npos) << problem->what;
}

TEST(PprofWire, OverlongVarintIsRefused) {
  Writer w = strings_prefix();
  w.raw(Writer::encode_varint(P::period << 3 | 0)).raw(std::string(11, '\xff')).raw("\x01");
  auto problem = check(w.str());
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->offset, 19u);
}

TEST(PprofWire, WrongWireTypeNamesTheField) {
  Writer w = strings_prefix();
  w.varint(P::sample_type, 7);  // a sub-message written as a varint
  auto problem = check(w.str());
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->offset, 18u);
  EXPECT_NE(problem->what.find("sample_type"), std::string::npos) << problem->what;
  EXPECT_NE(problem->what.find("wire type 0, expected 2"), std::string::npos) << problem->what;
}

TEST(PprofWire, FieldNumberZeroAndGroupWireTypesAreRefused) {
  auto zero = check(strings_prefix().raw(std::string(1, '\0')).str());
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->offset, 18u);
  EXPECT_NE(zero->what.find("field number 0"), std::string::npos) << zero->what;

  // Field 100 with wire type 3 (start group, long deprecated).
  auto group = check(strings_prefix().raw(Writer::encode_varint(100 << 3 | 3)).str());
  ASSERT_TRUE(group);
  EXPECT_EQ(group->offset, 18u);
  EXPECT_NE(group->what.find("wire type 3"), std::string::npos) << group->what;
}

TEST(PprofWire, FieldNumbersBeyondProtobufsRangeAreRefused) {
  // 2^29 - 1 is the largest field number; libprotobuf refuses larger ones, so must the
  // walker (found by fuzz_pprof: an unknown field 472786200489).
  auto largest = check(strings_prefix().raw(Writer::encode_varint(((uint64_t(1) << 29) - 1) << 3)).raw("\x01").str());
  EXPECT_EQ(largest, std::nullopt);
  auto beyond = check(strings_prefix().raw(Writer::encode_varint(uint64_t(1) << 29 << 3)).raw("\x01").str());
  ASSERT_TRUE(beyond);
  EXPECT_EQ(beyond->offset, 18u);
  EXPECT_NE(beyond->what.find("field number 536870912"), std::string::npos) << beyond->what;
}

TEST(PprofWire, TagsAndLengthsOfMoreThanFiveBytesAreRefused) {
  // Padded varints (0x80 continuation bytes) that libprotobuf refuses for tags and lengths,
  // which it reads as 32-bit varints (found by fuzz_pprof).
  using namespace std::string_view_literals;  // keeps the NUL bytes
  auto tag = check(strings_prefix().raw("\xe0\x80\x80\x80\x80\x00\x01"sv).str());  // period
  ASSERT_TRUE(tag);
  EXPECT_EQ(tag->offset, 18u);
  EXPECT_NE(tag->what.find("tag longer than 5 bytes"), std::string::npos) << tag->what;
  auto length = check(strings_prefix().raw("\x32\x81\x80\x80\x80\x80\x00x"sv).str());
  ASSERT_TRUE(length);
  EXPECT_EQ(length->offset, 19u);
  EXPECT_NE(length->what.find("length longer than 5 bytes"), std::string::npos) << length->what;
  // Five bytes are fine.
  EXPECT_EQ(check(strings_prefix().raw("\xe0\x80\x80\x80\x00\x01"sv).str()), std::nullopt);
}

TEST(PprofWire, TruncatedFixedWidthUnknownFieldIsRefused) {
  auto problem = check(strings_prefix().raw(Writer::encode_varint(100 << 3 | 1)).raw("1234").str());
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->offset, 20u);  // the tag of field 100 takes 2 bytes
  EXPECT_NE(problem->what.find("64-bit"), std::string::npos) << problem->what;
}

TEST(PprofWire, ProblemsInsideNestedMessagesHaveAbsoluteOffsets) {
  // location { id 1, line { function_id 1, line <truncated varint> } }
  Writer line;
  line.varint(schema::line::function_id, 1).raw(Writer::encode_varint(schema::line::line << 3)).raw("\x80");
  Writer location;
  location.varint(schema::location::id, 1).message(schema::location::line, line);
  Writer w = strings_prefix();
  w.message(P::location, location);
  // 18: location tag, 19: its length, 20-21: id, 22: line tag, 23: its length,
  // 24-25: function_id, 26: line's tag, 27: the truncated varint.
  auto problem = check(w.str());
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->offset, 27u);
  EXPECT_NE(problem->what.find("line"), std::string::npos) << problem->what;
}

TEST(PprofWire, BadPackedVarintIsReportedAtThatVarint) {
  Writer sample;
  sample.bytes(schema::sample::location_id, std::string("\x01\x02\x83", 3));
  Writer w = strings_prefix();
  w.message(P::sample, sample);
  // 18: sample tag, 19: length, 20: location_id tag, 21: length, 22, 23: ids 1 and 2, 24: bad.
  auto problem = check(w.str());
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->offset, 24u);
  EXPECT_NE(problem->what.find("location_id"), std::string::npos) << problem->what;
}

TEST(PprofWire, UnknownFieldsAreSkippedWhenReading) {
  // A newer producer's fields must not stop the reader (detection is stricter, see
  // pprof_detect_test.cc).
  Writer w = strings_prefix();
  w.message(P::sample_type, Writer().varint(1, 1).varint(2, 2))
      .varint(99, 5)
      .bytes(100, "future")
      .message(P::sample, Writer().varint(2, 3).varint(7, 1));
  EXPECT_EQ(check(w.str()), std::nullopt);
  auto profile = read_pprof_profile(w.str());
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_EQ(profile->total(0), 3);
}

TEST(PprofWire, ReadProfileNamesSourceAndOffset) {
  Writer w = strings_prefix();
  w.raw(Writer::encode_varint(P::string_table << 3 | 2)).raw(Writer::encode_varint(100));
  auto plain = read(w.str(), "cut.pb");
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().message.rfind("cut.pb: byte 18: ", 0), 0u) << plain.error().message;

  // For gzipped input the offset is in the inflated data, and the message says so.
  auto gz = read(gzip_bytes(w.str()), "cut.pb.gz");
  ASSERT_FALSE(gz);
  EXPECT_NE(gz.error().message.find("byte 18"), std::string::npos) << gz.error().message;
  EXPECT_NE(gz.error().message.find("uncompressed"), std::string::npos) << gz.error().message;
}

TEST(PprofWire, CorruptOrTruncatedGzipIsAClearError) {
  std::string gz = read_text(pprof_proto_fixture_path("split"));
  auto cut = read(gz.substr(0, gz.size() / 2), "half.pb.gz");
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().message.rfind("half.pb.gz: ", 0), 0u) << cut.error().message;
}

// Every prefix of a real profile's inflated bytes, and every single-byte corruption, gives
// an error or a profile; never a crash or an exception. And the verdict is the reference's:
// what libprotobuf refuses, read_profile refuses; what the walker accepts, libprotobuf
// parses, and read_profile accepts exactly when the reference converter does, with the
// same content. (The walker may refuse more than libprotobuf: a known field with the wrong
// wire type, which libprotobuf keeps as an unknown field.)
class PprofFixtureDamaged : public ::testing::TestWithParam<std::string> {};

void expect_error_or_profile(const std::string& bytes, const std::string& what) {
  auto profile = read(bytes, "damaged");
  if (!profile) {
    EXPECT_FALSE(profile.error().message.empty()) << what;
  }
  const bool well_formed = !pprof::check_wire(bytes_of(bytes));
  const auto message = reference::parse(bytes);
  if (well_formed) {
    ASSERT_TRUE(message) << what << ": the walker accepts what libprotobuf refuses";
  }
  if (!message || !well_formed) {
    EXPECT_FALSE(profile) << what << ": read, yet " << (message ? "the walker" : "libprotobuf")
                          << " refuses it";
    return;
  }
  auto expected = reference::to_profile(*message);
  ASSERT_EQ(bool(profile), bool(expected))
      << what << ": " << (profile ? expected.error().message : profile.error().message);
  if (!profile) return;
  expected->canonicalize();
  ASSERT_EQ(profile_content(*profile), profile_content(*expected)) << what;
}

TEST_P(PprofFixtureDamaged, EveryTruncationGivesAnErrorOrAProfile) {
  const std::string full = gunzip_bytes(read_text(pprof_proto_fixture_path(GetParam())));
  ASSERT_GT(full.size(), 100u);
  size_t errors = 0;
  for (size_t n = 0; n < full.size(); ++n) {
    const std::string cut = full.substr(0, n);
    auto problem = pprof::check_wire(bytes_of(cut));
    if (problem) {
      ++errors;
      EXPECT_LE(problem->offset, n) << "the reported offset lies inside the input";
    }
    expect_error_or_profile(cut, "first " + std::to_string(n) + " bytes");
  }
  // Most cuts fall inside a field; a few land on field boundaries and are well-formed.
  EXPECT_GT(errors, full.size() / 2);
  expect_error_or_profile(full, "the whole file");
  EXPECT_TRUE(read(full, "whole")) << "the intact fixture reads";
}

TEST_P(PprofFixtureDamaged, EverySingleByteCorruptionGivesAnErrorOrAProfile) {
  const std::string full = gunzip_bytes(read_text(pprof_proto_fixture_path(GetParam())));
  for (size_t i = 0; i < full.size(); ++i) {
    for (int flip : {0x01, 0x80, 0xff}) {
      std::string bad = full;
      bad[i] = static_cast<char>(uint8_t(bad[i]) ^ flip);
      expect_error_or_profile(bad, "byte " + std::to_string(i) + " ^ " + std::to_string(flip));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PprofFixtureDamaged,
                         ::testing::ValuesIn(pprof_proto_fixture_names()),
                         [](const auto& p) { return test_name(p.param); });

}  // namespace
}  // namespace tally::test
