// DCPI -> core::Profile: one image's histogram becomes one-frame samples in one mapping;
// event and period give the value types and period, epoch the time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dcpi_histogram.h"
#include "dcpi_read_helpers.h"
#include "formats/dcpi/dcpi_convert.h"

namespace tally::dcpi::test {
namespace {

using testing::HasSubstr;

const std::vector<RawChunk> kChunks = {{0x10, {5, 0, 7}}, {0x40, {1}}};

core::Expected<core::Profile> convert(const std::string& bytes, core::Diagnostics& diagnostics) {
  auto f = read_string(bytes, diagnostics);
  if (!f) return f.error();
  return to_profile(*f, "t.dcpi", diagnostics);
}

core::Expected<core::Profile> convert(const std::vector<std::string>& lines) {
  core::Diagnostics diagnostics;
  return convert(canonical_file(lines, kChunks), diagnostics);
}

std::vector<std::string> lines_with_path() {
  std::vector<std::string> lines = required_lines();
  lines.push_back("path /usr/bin/prog");
  lines.push_back("note kept as an attribute");
  return lines;
}

TEST(DcpiToProfile, EachAddressWithSamplesIsOneSingleFrameSample) {
  auto p = convert(lines_with_path());
  ASSERT_TRUE(p) << p.error().message;
  // tstart 120000000: the 0 count at offset 0x11 is no sample.
  Histogram expected = {{0x120000010, 5}, {0x120000012, 7}, {0x120000040, 1}};
  Histogram got;
  ASSERT_EQ(p->sample_count(), 3u);
  for (size_t s = 0; s < p->sample_count(); ++s) {
    ASSERT_EQ(p->stack(s).size(), 1u);
    const core::Location& l = p->location(p->stack(s)[0]);
    EXPECT_EQ(l.mapping, 1u);
    got[l.address] += static_cast<uint64_t>(p->values(s)[0]);
    EXPECT_EQ(p->values(s)[1], p->values(s)[0] * 62976) << "count x period";
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(p->total(0), 13);
  EXPECT_EQ(p->total(1), 13 * 62976);
}

TEST(DcpiToProfile, TheImageIsOneMappingFromTstartAndTsize) {
  auto p = convert(lines_with_path());
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_EQ(p->mappings.size(), 1u);
  const core::Mapping& m = p->mapping(1);
  EXPECT_EQ(m.start, 0x120000000u);
  EXPECT_EQ(m.limit, 0x120000000u + 4096);
  EXPECT_EQ(m.offset, 0u);
  EXPECT_EQ(p->str(m.file), "/usr/bin/prog");
}

TEST(DcpiToProfile, EventAndPeriodGiveTheValueTypes) {
  auto p = convert(lines_with_path());
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_EQ(p->sample_types.size(), 2u);
  EXPECT_EQ(p->str(p->sample_types[0].type), "samples");
  EXPECT_EQ(p->str(p->sample_types[0].unit), "count");
  EXPECT_EQ(p->str(p->sample_types[1].type), "cycles");
  EXPECT_EQ(p->str(p->sample_types[1].unit), "count");
  EXPECT_EQ(p->str(p->period_type.type), "cycles");
  EXPECT_EQ(p->period, 62976);
}

TEST(DcpiToProfile, TheEpochGivesTheTime) {
  auto p = convert(lines_with_path());  // epoch 9907011230
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->time_nanos, int64_t{930832200} * 1'000'000'000);
  auto longer = convert(with_line("epoch", "epoch 20240229123059"));
  ASSERT_TRUE(longer) << longer.error().message;
  EXPECT_EQ(longer->time_nanos, int64_t{1709209859} * 1'000'000'000);
}

TEST(DcpiToProfile, HeaderLinesAreKeptAsAttributesInOrder) {
  auto p = convert(lines_with_path());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->attribute("dcpi.platform"), "alpha");
  EXPECT_EQ(p->attribute("dcpi.note"), "kept as an attribute");
  std::vector<std::string> keys;
  for (const auto& [key, value] : p->attributes) keys.push_back(key);
  ASSERT_GE(keys.size(), 2u);
  EXPECT_EQ(keys.back(), "dcpi.note");
  EXPECT_EQ(keys[keys.size() - 2], "dcpi.path");
}

TEST(DcpiToProfile, TallysOwnLinesGiveTheUnitAndTheFileOffset) {
  std::vector<std::string> lines = required_lines();
  lines.push_back("eventunit nanoseconds");
  lines.push_back("tfileoffset 2000");
  auto p = convert(lines);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->str(p->sample_types[1].unit), "nanoseconds");
  EXPECT_EQ(p->str(p->period_type.unit), "nanoseconds");
  EXPECT_EQ(p->mapping(1).offset, 0x2000u);
}

TEST(DcpiToProfile, ABadFileOffsetLineIsAnError) {
  // tally writes bare hex digits; anything else is not its line.
  for (std::string bad : {"0x2000", "-1", "+20", "2000 ", "20g0", "10000000000000000"}) {
    std::vector<std::string> lines = required_lines();
    lines.push_back("tfileoffset " + bad);
    auto p = convert(lines);
    ASSERT_FALSE(p) << "'" << bad << "' was accepted";
    EXPECT_THAT(p.error().message, HasSubstr("tfileoffset"));
  }
}

TEST(DcpiToProfile, TheImageIdIsTheMappingsBuildId) {
  auto p = convert(lines_with_path());  // image 1a2b3c4d
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->str(p->mapping(1).build_id), "1a2b3c4d");
}

TEST(DcpiToProfile, AnEmptyHistogramIsAProfileWithoutSamples) {
  core::Diagnostics diagnostics;
  auto p = convert(canonical_file(required_lines(), {}), diagnostics);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->sample_count(), 0u);
  EXPECT_EQ(p->mappings.size(), 1u);
}

}  // namespace
}  // namespace tally::dcpi::test
