// How the entry points of pprof.h relate: read_profile is decode_profile + canonicalize,
// write_profile is encode_profile gzipped, gzipped and plain input read the same, errors
// are the same on every path, and the format dispatch (both io::Input overloads) gives
// what pprof::read_profile gives.
#include <gtest/gtest.h>

#include "core/diagnostics.h"
#include "every_field_message.h"
#include "formats/format.h"
#include "formats/pprof/pprof.h"
#include "io/input.h"
#include "pprof_test_helpers.h"
#include "profile_content.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

// Named inputs, uncompressed.
std::vector<std::pair<std::string, std::string>> inputs() {
  std::vector<std::pair<std::string, std::string>> out = {{"every field", every_field_message()}};
  for (const std::string& name : pprof_proto_fixture_names())
    out.emplace_back(name, gunzip_bytes(read_text(pprof_proto_fixture_path(name))));
  out.emplace_back("speedscope",
                   gunzip_bytes(read_text(shared("conformance/pprof/speedscope/simple.prof"))));
  return out;
}

core::Profile read_ok(const std::string& bytes, const std::string& name) {
  core::Diagnostics diagnostics;
  auto p = pprof::read_profile(bytes_of(bytes), name, diagnostics);
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(*p);
}

core::Profile decode_ok(const std::string& bytes, const std::string& name) {
  core::Diagnostics diagnostics;
  auto p = pprof::decode_profile(bytes_of(bytes), name, diagnostics);
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(*p);
}

TEST(PprofProfileIo, ReadIsDecodeThenCanonicalize) {
  for (const auto& [name, bytes] : inputs()) {
    core::Profile decoded = decode_ok(bytes, name);
    decoded.canonicalize();
    const core::Profile read = read_ok(bytes, name);
    EXPECT_GT(read.sample_count(), 0u) << name;
    EXPECT_EQ(profile_content(decoded), profile_content(read)) << name;
    // What read_profile gives is canonical already.
    core::Profile again = read;
    again.canonicalize();
    EXPECT_EQ(profile_content(again), profile_content(read)) << name;
  }
}

TEST(PprofProfileIo, GzippedAndPlainReadTheSame) {
  for (const auto& [name, bytes] : inputs())
    EXPECT_EQ(profile_content(read_ok(gzip_bytes(bytes), name)),
              profile_content(read_ok(bytes, name)))
        << name;
}

TEST(PprofProfileIo, EncodeCanonicalizesFirst) {
  // A decoded (not yet canonical) profile encodes as its canonical form does.
  for (const auto& [name, bytes] : inputs())
    EXPECT_EQ(pprof::encode_profile(decode_ok(bytes, name)),
              pprof::encode_profile(read_ok(bytes, name)))
        << name;
}

TEST(PprofProfileIo, WriteIsTheEncodingGzippedInOneMemberWhenSmall) {
  for (const auto& [name, bytes] : inputs()) {
    const core::Profile p = read_ok(bytes, name);
    const std::string written = pprof::write_profile(p);
    ASSERT_GE(written.size(), 10u);
    EXPECT_EQ(uint8_t(written[0]), 0x1f) << name;
    EXPECT_EQ(uint8_t(written[1]), 0x8b) << name;
    EXPECT_EQ(gzip_member_count(written), 1u) << name << ": well under 8 MB";
    EXPECT_EQ(gunzip_bytes(written), pprof::encode_profile(p)) << name;
  }
}

TEST(PprofProfileIo, TheSameErrorFromEveryPath) {
  std::string cut = gunzip_bytes(read_text(pprof_proto_fixture_path("split")));
  cut.resize(cut.size() - 5);
  core::Diagnostics diagnostics;
  auto read = pprof::read_profile(bytes_of(cut), "test.pb", diagnostics);
  auto decoded = pprof::decode_profile(bytes_of(cut), "test.pb", diagnostics);
  ASSERT_FALSE(read);
  ASSERT_FALSE(decoded);
  EXPECT_EQ(read.error().message, decoded.error().message);
  EXPECT_EQ(read.error().message.rfind("test.pb: byte ", 0), 0u) << read.error().message;

  TempDir dir;
  write_bytes(dir.file("cut.pb"), cut);
  auto input = io::Input::open(dir.file("cut.pb"));
  ASSERT_TRUE(input) << input.error().message;
  auto dispatched = formats::read_profile(std::move(*input), diagnostics);
  ASSERT_FALSE(dispatched);
  EXPECT_NE(dispatched.error().message.find("byte "), std::string::npos)
      << dispatched.error().message;
}

TEST(PprofProfileIo, TheFormatDispatchReadsWhatReadProfileReads) {
  // Both io::Input overloads (the one that frees the input early takes its own path).
  TempDir dir;
  const std::string plain = dir.file("split.pb");
  write_bytes(plain, gunzip_bytes(read_text(pprof_proto_fixture_path("split"))));
  const std::string expected =
      profile_content(read_ok(read_text(pprof_proto_fixture_path("split")), "split"));
  for (const std::string& path : {pprof_proto_fixture_path("split"), plain}) {
    for (bool moved : {false, true}) {
      auto input = io::Input::open(path);
      ASSERT_TRUE(input) << input.error().message;
      core::Diagnostics diagnostics;
      formats::Format found = formats::Format::unknown;
      auto p = moved ? formats::read_profile(std::move(*input), diagnostics, &found)
                     : formats::read_profile(*input, diagnostics, &found);
      ASSERT_TRUE(p) << p.error().message;
      EXPECT_EQ(found, formats::Format::pprof) << path;
      EXPECT_EQ(profile_content(*p), expected) << path << (moved ? " (moved)" : "");
      EXPECT_TRUE(diagnostics.warnings().empty()) << path;
    }
  }
}

}  // namespace
}  // namespace tally::test
