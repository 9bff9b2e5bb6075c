// Round trips on every real fixture: the file layer reproduces each fixture byte for byte;
// the profile layer (read -> core -> write) is stable and deterministic; and the files
// tally writes are read by the real google/pprof and Debian's perl google-pprof exactly as
// the originals are.
#include <gtest/gtest.h>

#include <sstream>

#include "core/diagnostics.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/gperf_file.h"
#include "gperf_fixture_list.h"
#include "pprof_raw.h"
#include "profile_view.h"

namespace tally::test {
namespace {

std::vector<uint8_t> as_vector(const std::string& s) { return {s.begin(), s.end()}; }

core::Profile read_profile_or_throw(const std::string& bytes, const std::string& source) {
  core::Diagnostics diagnostics;
  auto p = gperf::read_profile(as_vector(bytes), source, diagnostics);
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(p).value();
}

std::string write_profile(const core::Profile& p) {
  core::Diagnostics diagnostics;
  auto file = gperf::from_profile(p, diagnostics);
  if (!file) throw std::runtime_error(file.error().message);
  if (!diagnostics.empty()) throw std::runtime_error("unexpected: " + diagnostics.warnings()[0]);
  return gperf::write_gperf(*file);
}

std::string read_fixture(const std::string& name) {
  std::vector<uint8_t> b = read_bytes(gperf_fixture_path(name));
  return {b.begin(), b.end()};
}

// The fixture read by tally's profile layer and written back as a gperftools file.
std::string tally_rewrite(const std::string& name) {
  return write_profile(read_profile_or_throw(read_fixture(name), name));
}

class GperfRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(GperfRoundTrip, FileLayerReproducesTheFixtureByteForByte) {
  std::string original = read_fixture(GetParam());
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(as_vector(original), GetParam(), diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_TRUE(gperf::write_gperf(*file) == original);
}

TEST_P(GperfRoundTrip, ProfileLayerWriteReadWriteIsByteIdentical) {
  std::string first = tally_rewrite(GetParam());
  std::string second = write_profile(read_profile_or_throw(first, "first"));
  EXPECT_EQ(first.size(), second.size());
  EXPECT_TRUE(first == second);
  EXPECT_TRUE(tally_rewrite(GetParam()) == first) << "not deterministic";
}

TEST_P(GperfRoundTrip, RewrittenFileHoldsTheSameProfile) {
  core::Profile original = read_profile_or_throw(read_fixture(GetParam()), GetParam());
  core::Profile again = read_profile_or_throw(tally_rewrite(GetParam()), "rewritten");
  EXPECT_EQ(weighted_stacks(again), weighted_stacks(original));
  EXPECT_EQ(weighted_stacks(again, 1), weighted_stacks(original, 1));
  EXPECT_EQ(mapping_by_address(again), mapping_by_address(original));
  EXPECT_EQ(again.period, original.period);
}

TEST_P(GperfRoundTrip, RealPprofReadsTallysFileLikeTheOriginal) {
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  TempDir dir;
  write_bytes(dir.file("tally.prof"), tally_rewrite(GetParam()));
  PprofRaw original = run_pprof_raw(pprof, gperf_fixture_path(GetParam()));
  PprofRaw rewritten = run_pprof_raw(pprof, dir.file("tally.prof"));
  EXPECT_EQ(rewritten.period, original.period);
  EXPECT_EQ(rewritten.samples.size(), original.samples.size());
  EXPECT_EQ(total_count(rewritten.weighted_stacks()), total_count(original.weighted_stacks()));
  EXPECT_EQ(rewritten.weighted_stacks(), original.weighted_stacks());
  EXPECT_EQ(rewritten.mapping_by_address(), original.mapping_by_address());
}

std::string without_using_lines(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (!line.starts_with("Using local file")) out += line + "\n";
  return out;
}

// Debian's perl pprof needs the program to symbolize; the fixture's binary is in bin/.
TEST_P(GperfRoundTrip, PerlGooglePprofReadsTallysFileLikeTheOriginal) {
  std::string google_pprof = find_program("google-pprof");
  TALLY_REQUIRE_PEER(google_pprof, "google-pprof (Debian's perl pprof)");
  std::string binary;
  for (const GperfFixture& f : gperf_fixtures())
    if (f.name == GetParam()) binary = shared("fixtures/bin/" + f.binary);
  ASSERT_FALSE(binary.empty()) << "no binary known for " << GetParam();
  TempDir dir;
  write_bytes(dir.file("tally.prof"), tally_rewrite(GetParam()));
  RunResult original = run({google_pprof, "--text", binary, gperf_fixture_path(GetParam())});
  RunResult rewritten = run({google_pprof, "--text", binary, dir.file("tally.prof")});
  ASSERT_EQ(original.exit_code, 0) << original.err;
  ASSERT_EQ(rewritten.exit_code, 0) << rewritten.err;
  core::Profile p = read_profile_or_throw(read_fixture(GetParam()), GetParam());
  std::string total = "Total: " + std::to_string(p.total(0)) + " samples";
  EXPECT_NE(without_using_lines(rewritten.out).find(total), std::string::npos) << rewritten.out;
  EXPECT_EQ(without_using_lines(rewritten.out), without_using_lines(original.out));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GperfRoundTrip, ::testing::ValuesIn(gperf_fixture_names()),
                         [](const auto& param_info) { return gperf_test_name(param_info.param); });

}  // namespace
}  // namespace tally::test
