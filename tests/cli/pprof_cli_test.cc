// `tally merge`, `tally convert --to pprof` and `tally cat` on pprof files, run as the user
// runs them. What the output holds is read with the pprof tests' own protobuf decoder
// (tests/formats/pprof/proto_wire.h) or with google/pprof, never with tally's reader.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "gperf_decoder.h"
#include "pprof_schema.h"
#include "pprof_test_helpers.h"
#include "proto_wire.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

namespace S = schema;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The comments of a gzipped profile, decoded by the tests' own decoder.
std::vector<std::string> comments_of(const std::string& gz) {
  wire::Message m(gunzip_bytes(gz));
  std::vector<std::string> strings = m.strings(S::profile::string_table);
  std::vector<std::string> out;
  for (uint64_t index : m.varints(S::profile::comment)) out.push_back(strings.at(index));
  return out;
}

// Sum of each value over the samples of a gzipped profile.
std::vector<int64_t> totals_of(const std::string& gz) {
  std::vector<int64_t> totals;
  for (const wire::Message& s : wire::Message(gunzip_bytes(gz)).messages(S::profile::sample)) {
    std::vector<int64_t> values = s.int64s(S::sample::value);
    totals.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) totals[i] += values[i];
  }
  return totals;
}

// A pprof heap profile: other sample types than a CPU profile's.
std::string heap_profile() {
  wire::Writer w;
  for (const char* s : {"", "alloc_space", "bytes"}) w.bytes(S::profile::string_table, s);
  w.message(S::profile::sample_type,
            wire::Writer().varint(S::value_type::type, 1).varint(S::value_type::unit, 2))
      .message(S::profile::location, wire::Writer().varint(S::location::id, 1).varint(S::location::address, 0x1000))
      .message(S::profile::sample, wire::Writer().packed(S::sample::location_id, {1}).packed(S::sample::value, {4096}));
  return gzip_bytes(w.str());
}

// pprof's text, without the lines of tally's own comments ("tally: ..."), which pprof
// prints and which a pprof-made profile does not have.
std::string pprof_without_tally_comments(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {find_pprof()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = run(argv);
  if (r.exit_code != 0) throw std::runtime_error("pprof failed: " + r.err);
  std::istringstream in(r.out);
  std::string line, out;
  while (std::getline(in, line))
    if (!line.starts_with("tally: ") && !line.starts_with("Comment: tally: ")) out += line + "\n";
  return out;
}

TEST(CliMerge, TwoGperfProfilesGiveWhatPprofGivesForBoth) {
  TALLY_REQUIRE_PEER(find_pprof(), "google/pprof");
  const std::string a = shared("fixtures/gperf/split.prof");
  const std::string b = shared("fixtures/gperf/split-f100.prof");
  TempDir dir;
  const std::string merged = dir.file("merged.pb.gz");
  RunResult r = run_tally({"merge", a, b, "-o", merged});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // The two runs loaded split at different addresses (ASLR): the same top and the same raw
  // samples, locations and mappings mean tally relocated them as pprof does.
  for (const std::vector<std::string>& view :
       {std::vector<std::string>{"-top", "-symbolize=none", "-nodecount=1000"},
        std::vector<std::string>{"-raw", "-symbolize=none"}}) {
    std::vector<std::string> both = view, ours = view;
    both.insert(both.end(), {a, b});
    ours.push_back(merged);
    const std::string expected = pprof_without_tally_comments(both);
    ASSERT_TRUE(contains(expected, "1.39s") || contains(expected, "Samples:")) << expected;
    EXPECT_EQ(pprof_without_tally_comments(ours), expected) << view[0];
  }

  // The periods differ (1 ms and 10 ms): said on stderr, and kept in the output.
  EXPECT_TRUE(contains(r.err, "periods differ")) << r.err;
  bool noted = false;
  for (const std::string& c : comments_of(read_text(merged)))
    noted = noted || (c.starts_with("tally: ") && contains(c, "periods differ"));
  EXPECT_TRUE(noted);
}

TEST(CliMerge, SumsTheSameProfileGivenTwice) {
  const std::string fixture = pprof_proto_fixture_path("split");
  TempDir dir;
  RunResult r = run_tally({"merge", fixture, fixture, "-o", dir.file("twice.pb.gz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "identical inputs agree on everything";
  // split.pb.raw.txt: 276 samples, 276000000 ns.
  EXPECT_EQ(totals_of(read_text(fixture)), (std::vector<int64_t>{276, 276000000}));
  EXPECT_EQ(totals_of(read_text(dir.file("twice.pb.gz"))), (std::vector<int64_t>{552, 552000000}));
}

TEST(CliMerge, DifferentSampleTypesAreRefusedWithExitCode4) {
  TempDir dir;
  write_bytes(dir.file("heap.pb.gz"), heap_profile());
  const std::string out = dir.file("merged.pb.gz");
  RunResult r = run_tally({"merge", shared("fixtures/gperf/split.prof"), dir.file("heap.pb.gz"), "-o", out});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "different sample types")) << r.err;
  EXPECT_TRUE(contains(r.err, "samples/count, cpu/nanoseconds")) << r.err;
  EXPECT_TRUE(contains(r.err, "alloc_space/bytes")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out)) << "nothing is written on failure";
}

TEST(CliMerge, WritesOtherFormatsToo) {
  TempDir dir;
  const std::string a = shared("fixtures/gperf/split.prof");
  RunResult r = run_tally({"merge", a, a, "--to", "gperf", "-o", dir.file("twice.prof")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The fixture README: split.prof has 276 samples.
  EXPECT_EQ(decode_gperf64le(read_bytes(dir.file("twice.prof"))).total_samples(), 552u);
}

TEST(CliConvert, LossesOfReadingAreKeptAsCommentsOfThePprofOutput) {
  // split.prof cut after its first record: no trailer, which the gperf reader reports.
  std::vector<uint8_t> bytes = read_bytes(shared("fixtures/gperf/split.prof"));
  auto word = [&](size_t i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = v << 8 | bytes[8 * i + size_t(b)];
    return v;
  };
  const uint64_t first_count = word(5), first_depth = word(6);
  ASSERT_GT(first_count, 0u);
  const size_t cut = 8 * (5 + 2 + first_depth);
  TempDir dir;
  write_bytes(dir.file("cut.prof"), std::string(bytes.begin(), bytes.begin() + cut));

  RunResult r = run_tally({"convert", dir.file("cut.prof"), "--to", "pprof", "-o", dir.file("cut.pb.gz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "trailer")) << r.err;
  const std::string out = read_text(dir.file("cut.pb.gz"));
  std::vector<std::string> comments = comments_of(out);
  ASSERT_EQ(comments.size(), 1u);
  EXPECT_TRUE(comments[0].starts_with("tally: ")) << comments[0];
  EXPECT_TRUE(contains(comments[0], "trailer")) << comments[0];
  EXPECT_TRUE(contains(r.err, comments[0].substr(7))) << "the same words on stderr and in the file";
  EXPECT_EQ(totals_of(out).at(0), static_cast<int64_t>(first_count));
}

TEST(CliConvert, ALosslessConversionAddsNoComment) {
  TempDir dir;
  RunResult r = run_tally({"convert", shared("fixtures/gperf/split.prof"), "--to", "pprof", "-o", dir.file("s.pb.gz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(comments_of(read_text(dir.file("s.pb.gz"))).empty());
}

TEST(CliConvert, PprofFromStdinToStdout) {
  const std::string fixture = read_text(pprof_proto_fixture_path("split"));
  RunResult r = run_tally({"convert", "-", "--to", "pprof", "-o", "-"}, fixture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(totals_of(r.out), (std::vector<int64_t>{276, 276000000}));
}

TEST(CliConvert, AProfileOfSeveralGzipBlocksConvertsWhole) {
  // 800000 distinct 6-frame stacks, about 15 MB of message: tally writes it as several
  // 8 MB gzip members (pprof.h), which the tests' own zlib reader must read to the end.
  namespace P = S::profile;
  wire::Writer w;
  for (const char* s : {"", "samples", "count"}) w.bytes(P::string_table, s);
  w.message(P::sample_type,
            wire::Writer().varint(S::value_type::type, 1).varint(S::value_type::unit, 2));
  constexpr uint64_t kLocations = 1000, kSamples = 800000;
  for (uint64_t id = 1; id <= kLocations; ++id)
    w.message(P::location,
              wire::Writer().varint(S::location::id, id).varint(S::location::address, 0x1000 + id));
  int64_t total = 0;
  for (uint64_t i = 0; i < kSamples; ++i) {
    // The first two frames make the stack unique; the others vary too.
    std::vector<uint64_t> ids = {i % kLocations + 1, i / kLocations + 1};
    for (uint64_t k = 2; k < 6; ++k) ids.push_back((i * (2 * k + 1) + k) % kLocations + 1);
    const uint64_t value = i % 5 + 1;
    total += static_cast<int64_t>(value);
    w.message(P::sample, wire::Writer().packed(S::sample::location_id, ids).packed(S::sample::value, {value}));
  }
  TempDir dir;
  write_bytes(dir.file("big.pb.gz"), gzip_bytes(w.str()));
  RunResult r = run_tally({"convert", dir.file("big.pb.gz"), "--to", "pprof", "-o", dir.file("out.pb.gz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string out = read_text(dir.file("out.pb.gz"));
  EXPECT_GT(gzip_member_count(out), 1u);
  EXPECT_EQ(totals_of(out), (std::vector<int64_t>{total}));
  EXPECT_EQ(wire::Message(gunzip_bytes(out)).messages(P::sample).size(), kSamples);
}

TEST(CliConvert, CorruptPprofIsMalformedInputWithAnOffset) {
  // A valid message cut inside its last field: exit 1, the file named, a byte offset given.
  std::string inflated = gunzip_bytes(read_text(pprof_proto_fixture_path("split")));
  TempDir dir;
  const std::string cut = dir.file("cut.pb");
  write_bytes(cut, inflated.substr(0, inflated.size() - 3));
  RunResult r = run_tally({"convert", cut, "--to", "pprof", "-o", dir.file("out.pb.gz")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, cut)) << r.err;
  EXPECT_TRUE(contains(r.err, "byte ")) << r.err;
}

TEST(CliCat, ShowsAPprofProfileAsPprofDoes) {
  RunResult r = run_tally({"cat", pprof_proto_fixture_path("split")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "pprof")) << r.out;
  // From split.pb.raw.txt: 6 samples; location 13 is func_a at split.cc:26; the main
  // mapping is ../bin/split at 0x55fdbeefb000.
  size_t samples = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) samples += line.starts_with("sample ");
  EXPECT_EQ(samples, 6u) << r.out;
  EXPECT_TRUE(contains(r.out, "111 111000000")) << r.out;
  EXPECT_TRUE(contains(r.out, "0x55fdbeefb674")) << r.out;
  EXPECT_TRUE(contains(r.out, "func_a /tally/workloads/split.cc:26")) << r.out;
  EXPECT_TRUE(contains(r.out, "../bin/split")) << r.out;
}

}  // namespace
}  // namespace tally::test
