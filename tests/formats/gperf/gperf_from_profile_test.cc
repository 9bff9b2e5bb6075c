// core::Profile -> gperftools file: what is written (checked against the test's own
// encoder), and what the format cannot hold, which must be reported, never dropped quietly.
#include <gtest/gtest.h>

#include "core/diagnostics.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/gperf_file.h"
#include "formats/gperf/mapped_objects.h"
#include "gperf_encoder.h"

namespace tally::test {
namespace {

// samples/count + cpu/nanoseconds, period 2 ms: what the gperftools reader produces.
// Two samples in /bin/prog: [0x11100 <- 0x11204] x3 and [0x11300] x1.
core::Profile cpu_profile() {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 2000000;
  core::MappingId prog = p.add_mapping(
      {.start = 0x11000, .limit = 0x12000, .offset = 0x1000, .file = p.intern("/bin/prog")});
  core::LocationId leaf = p.add_location({.mapping = prog, .address = 0x11100, .lines = {}});
  core::LocationId caller = p.add_location({.mapping = prog, .address = 0x11204, .lines = {}});
  core::LocationId other = p.add_location({.mapping = prog, .address = 0x11300, .lines = {}});
  std::vector<core::LocationId> stack1 = {leaf, caller}, stack2 = {other};
  std::vector<int64_t> v1 = {3, 6000000}, v2 = {1, 2000000};
  p.add_sample(stack1, v1);
  p.add_sample(stack2, v2);
  return p;
}

std::vector<std::string> warnings_of(const core::Profile& p) {
  core::Diagnostics diagnostics;
  auto file = gperf::from_profile(p, diagnostics);
  EXPECT_TRUE(file) << file.error().message;
  return diagnostics.warnings();
}

bool any_contains(const std::vector<std::string>& warnings, const std::string& text) {
  for (const std::string& w : warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

TEST(GperfFromProfile, WritesHeaderRecordsTrailerAndMappings) {
  core::Diagnostics diagnostics;
  auto file = gperf::from_profile(cpu_profile(), diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_TRUE(diagnostics.empty()) << diagnostics.warnings()[0];
  std::string bytes = gperf::write_gperf(*file);

  // 64-bit little-endian, header 0, 3, 0, 2000 us, 0; the caller back to a return address.
  std::string binary = GperfEncoder(8, std::endian::little)
                           .header(2000)
                           .record(3, {0x11100, 0x11205})
                           .record(1, {0x11300})
                           .trailer()
                           .bytes();
  ASSERT_GE(bytes.size(), binary.size());
  EXPECT_EQ(bytes.substr(0, binary.size()), binary);

  auto maps = gperf::parse_mapped_objects(bytes.substr(binary.size()));
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0].start, 0x11000u);
  EXPECT_EQ(maps[0].limit, 0x12000u);
  EXPECT_EQ(maps[0].offset, 0x1000u);
  EXPECT_TRUE(maps[0].executable());
  EXPECT_EQ(maps[0].path, "/bin/prog");
}

TEST(GperfFromProfile, SameProfileSameBytes) {
  core::Diagnostics diagnostics;
  auto a = gperf::from_profile(cpu_profile(), diagnostics);
  auto b = gperf::from_profile(cpu_profile(), diagnostics);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(gperf::write_gperf(*a), gperf::write_gperf(*b));
}

TEST(GperfFromProfile, LabelsAreReportedAsLost) {
  core::Profile p = cpu_profile();
  core::Label thread{.key = p.intern("thread"), .str = 0, .num = 7, .num_unit = 0};
  std::vector<core::LocationId> stack = {1};
  std::vector<int64_t> values = {5, 10000000};
  p.add_sample(stack, values, std::span<const core::Label>(&thread, 1));
  std::vector<std::string> warnings = warnings_of(p);
  EXPECT_TRUE(any_contains(warnings, "label")) << ::testing::PrintToString(warnings);
}

TEST(GperfFromProfile, ExtraSampleTypesAreReportedAsLost) {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds"),
                    p.value_type("alloc_space", "bytes")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 1000000;
  core::LocationId l = p.add_location({.mapping = 0, .address = 0x5000, .lines = {}});
  std::vector<core::LocationId> stack = {l};
  std::vector<int64_t> values = {2, 2000000, 4096};
  p.add_sample(stack, values);
  std::vector<std::string> warnings = warnings_of(p);
  EXPECT_TRUE(any_contains(warnings, "alloc_space")) << ::testing::PrintToString(warnings);
  // cpu = samples x period is implied by the format: not a loss.
  for (const std::string& w : warnings) EXPECT_EQ(w.find("cpu"), std::string::npos) << w;
}

TEST(GperfFromProfile, BuildIdsAreReportedAsLost) {
  core::Profile p = cpu_profile();
  p.mappings[0].build_id = p.intern("8f3a1c");
  std::vector<std::string> warnings = warnings_of(p);
  EXPECT_TRUE(any_contains(warnings, "build id")) << ::testing::PrintToString(warnings);
}

TEST(GperfFromProfile, ProfileWithoutAddressesIsRefused) {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 1000000;
  core::FunctionId f = p.add_function({.name = p.intern("main"), .system_name = 0,
                                       .filename = 0, .start_line = 0});
  core::LocationId l = p.add_location({.mapping = 0, .address = 0, .lines = {{f, 12, 0}}});
  std::vector<core::LocationId> stack = {l};
  std::vector<int64_t> values = {4};
  p.add_sample(stack, values);
  core::Diagnostics diagnostics;
  auto file = gperf::from_profile(p, diagnostics);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().kind, core::ErrorKind::unsupported);
  EXPECT_NE(file.error().message.find("address"), std::string::npos) << file.error().message;
}

TEST(GperfFromProfile, NonTimePeriodIsReported) {
  core::Profile p = cpu_profile();
  p.period_type = p.value_type("cycles", "count");
  p.period = 10007;
  core::Diagnostics diagnostics;
  auto file = gperf::from_profile(p, diagnostics);
  ASSERT_TRUE(file);
  EXPECT_EQ(file->header.period_us, 10007u);
  EXPECT_TRUE(any_contains(diagnostics.warnings(), "period"));
}

// A period longer than the model can hold in nanoseconds (a fuzzer's pprof input said
// 58963466774884190 of no unit) is written as the longest one, so tally reads its own file.
TEST(GperfFromProfile, OverlongPeriodIsCappedSoTheFileReadsBack) {
  for (const char* unit : {"count", "seconds"}) {
    core::Profile p = cpu_profile();
    p.period_type = p.value_type("cycles", unit);
    p.period = 58963466774884190;
    core::Diagnostics diagnostics;
    auto file = gperf::from_profile(p, diagnostics);
    ASSERT_TRUE(file) << unit;
    EXPECT_EQ(file->header.period_us, uint64_t(INT64_MAX / 1000)) << unit;
    EXPECT_TRUE(any_contains(diagnostics.warnings(), "longer than a reader can hold")) << unit;
    const std::string bytes = gperf::write_gperf(*file);
    core::Diagnostics again;
    auto back = gperf::read_profile(std::vector<uint8_t>(bytes.begin(), bytes.end()), "back", again);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->period, INT64_MAX / 1000 * 1000) << unit;
  }
}

}  // namespace
}  // namespace tally::test
