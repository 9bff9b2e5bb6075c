// Detection: pprof messages are recognised, gzipped or not; gperftools and DCPI files, text
// of every kind in ../shared and random bytes are not claimed as pprof.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/diagnostics.h"
#include "formats/format.h"
#include "formats/pprof/pprof.h"
#include "io/input.h"
#include "pprof_schema.h"
#include "pprof_test_helpers.h"
#include "proto_wire.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

// splitmix64, for reproducible random bytes.
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool claimed(const std::string& bytes) { return pprof::looks_like_pprof(bytes_of(bytes)); }

TEST(PprofDetect, FixturesAreRecognisedOnceInflated) {
  for (const std::string& name : pprof_proto_fixture_names()) {
    std::string inflated = gunzip_bytes(read_text(pprof_proto_fixture_path(name)));
    EXPECT_TRUE(claimed(inflated)) << name;
    EXPECT_EQ(formats::detect(bytes_of(inflated)), formats::Format::pprof) << name;
  }
}

TEST(PprofDetect, GzippedAndPlainInputBothRead) {
  const std::string gz = read_text(pprof_proto_fixture_path("split"));
  const std::string plain = gunzip_bytes(gz);
  auto from_gz = read_pprof_profile(gz);
  auto from_plain = read_pprof_profile(plain);
  ASSERT_TRUE(from_gz) << from_gz.error().message;
  ASSERT_TRUE(from_plain) << from_plain.error().message;
  // split.pb.raw.txt (pprof -raw of the fixture): 6 samples, 276 in all.
  EXPECT_EQ(from_gz->sample_count(), 6u);
  EXPECT_EQ(from_gz->total(0), 276);
  EXPECT_EQ(from_plain->sample_count(), 6u);
  EXPECT_EQ(from_plain->total(0), 276);

  // And through the format dispatch, from files.
  TempDir dir;
  write_bytes(dir.file("plain.pb"), plain);
  for (const std::string& path : {pprof_proto_fixture_path("split"), dir.file("plain.pb")}) {
    auto input = io::Input::open(path);
    ASSERT_TRUE(input) << input.error().message;
    core::Diagnostics diagnostics;
    formats::Format found = formats::Format::unknown;
    auto p = formats::read_profile(*input, diagnostics, &found);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(found, formats::Format::pprof) << path;
    EXPECT_EQ(p->total(0), 276) << path;
  }
}

TEST(PprofDetect, AMinimalMessageIsRecognised) {
  wire::Writer w;
  w.bytes(schema::profile::string_table, "").varint(schema::profile::period, 10);
  EXPECT_TRUE(claimed(w.str()));
}

TEST(PprofDetect, AProfileCutShortIsStillRecognised) {
  // So that reading it says where it was cut, rather than "unrecognised format". Past its
  // first half, a fixture has well over three complete fields, sub-messages among them.
  for (const std::string& name : pprof_proto_fixture_names()) {
    const std::string full = gunzip_bytes(read_text(pprof_proto_fixture_path(name)));
    for (size_t n = full.size() / 2; n < full.size(); ++n) {
      const std::string cut = full.substr(0, n);
      ASSERT_TRUE(claimed(cut)) << name << " cut to " << n << " bytes";
      ASSERT_EQ(formats::detect(bytes_of(cut)), formats::Format::pprof) << name << " " << n;
    }
  }
}

TEST(PprofDetect, EmptyInputAndUnknownTopLevelFieldsAreNotClaimed) {
  EXPECT_FALSE(claimed(""));
  // Well-formed protobuf, but of some other message: field 16 is not in profile.proto.
  wire::Writer w;
  w.bytes(schema::profile::string_table, "").varint(16, 1);
  EXPECT_FALSE(claimed(w.str()));
}

TEST(PprofDetect, GperftoolsProfilesAreNotClaimed) {
  for (const GperfFixture& f : gperf_fixtures()) {
    const std::string bytes = read_text(shared("fixtures/gperf/" + f.name + ".prof"));
    EXPECT_FALSE(claimed(bytes)) << f.name;
    EXPECT_EQ(formats::detect(bytes_of(bytes)), formats::Format::gperf) << f.name;
  }
}

TEST(PprofDetect, DcpiFilesAreNotClaimed) {
  // DCPI files made by tally's DCPI writer from each gperftools fixture.
  size_t files = 0;
  for (const GperfFixture& f : gperf_fixtures()) {
    auto input = io::Input::open(shared("fixtures/gperf/" + f.name + ".prof"));
    ASSERT_TRUE(input);
    core::Diagnostics diagnostics;
    auto profile = formats::read_profile(*input, diagnostics);
    ASSERT_TRUE(profile) << profile.error().message;
    auto written = formats::write_profile(*profile, formats::Format::dcpi, diagnostics);
    ASSERT_TRUE(written) << written.error().message;
    for (const formats::OutputFile& file : *written) {
      ++files;
      EXPECT_FALSE(claimed(file.bytes)) << f.name << " " << file.name;
      EXPECT_EQ(formats::detect(bytes_of(file.bytes)), formats::Format::dcpi) << file.name;
    }
  }
  EXPECT_GE(files, gperf_fixtures().size());
}

TEST(PprofDetect, NoTextFileInSharedIsClaimed) {
  // Specs, READMEs, pprof/perf/callgrind text outputs, perf script and folded files: every
  // file under ../shared that is text.
  size_t texts = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(shared_dir())) {
    if (!e.is_regular_file() || e.file_size() > (8u << 20)) continue;
    const std::string bytes = read_text(e.path().string());
    bool text = !bytes.empty() && bytes.find('\0') == std::string::npos;
    if (!text) continue;
    ++texts;
    EXPECT_FALSE(claimed(bytes)) << e.path();
  }
  EXPECT_GT(texts, 50u);
}

TEST(PprofDetect, ShortTextsAreNotClaimed) {
  for (const char* text : {"hello world\n", "main;foo;bar 12\n", "a 1\n", "2\n", "0x1234\n",
                           "\"quoted\"", "*", "R", "ZZZZZZZZ", "# comment\n", "{\"json\": 1}"})
    EXPECT_FALSE(claimed(text)) << text;
}

TEST(PprofDetect, RandomBytesAreAlmostNeverClaimed) {
  // Random data starts with a valid tag of a known field, and then stays well-formed to its
  // end, rarely; a handful of hits in 20000 tries of 64..1024 bytes would still be fine.
  uint64_t state = 42;
  int hits = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes(64 + next_random(state) % 960, '\0');
    for (char& c : bytes) c = static_cast<char>(next_random(state));
    hits += claimed(bytes);
  }
  EXPECT_LE(hits, 5);
}

}  // namespace
}  // namespace tally::test
