// The reader finds the slot width and byte order from the header alone: the same records
// encoded (by the test's own encoder) in every layout decode to the same file and profile.
#include <gtest/gtest.h>

#include "core/diagnostics.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/gperf_file.h"
#include "gperf_encoder.h"
#include "profile_view.h"

namespace tally::test {
namespace {

constexpr uint64_t kPeriodUs = 2500;
const std::string kMaps = "00090000-000f0000 r-xp 00000000 08:01 42         /bin/prog\n";

// Three records; the first and third have the same call chain.
std::string encode(GperfEncoder e, const std::vector<uint64_t>& extra_header = {0}) {
  return e.header(kPeriodUs, extra_header)
      .record(5, {0xa0000, 0xc0000, 0xe0000})
      .record(2, {0xa0010, 0xc0000})
      .record(3, {0xa0000, 0xc0000, 0xe0000})
      .trailer()
      .text(kMaps)
      .bytes();
}

const std::vector<uint64_t> kRecordSlots = {5, 3, 0xa0000, 0xc0000, 0xe0000, 2, 2, 0xa0010,
                                            0xc0000, 3, 3, 0xa0000, 0xc0000, 0xe0000};

struct LayoutCase {
  std::string name;
  unsigned word_bytes;
  std::endian order;
  std::vector<uint64_t> extra_header;  // header slots 4...
  std::string layout_name;
};

class GperfLayout : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(GperfLayout, ReadsHeaderRecordsAndMappedObjects) {
  const LayoutCase& c = GetParam();
  std::string bytes = encode(GperfEncoder(c.word_bytes, c.order), c.extra_header);
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(as_bytes(bytes), "synthetic", diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_EQ(file->header.layout.word_bytes, c.word_bytes);
  EXPECT_EQ(file->header.layout.order, c.order);
  EXPECT_EQ(gperf::layout_name(file->header.layout), c.layout_name);
  EXPECT_EQ(file->header.slots_after_count, 2 + c.extra_header.size());
  EXPECT_EQ(file->header.period_us, kPeriodUs);
  EXPECT_EQ(file->header.extra, c.extra_header);
  EXPECT_EQ(file->record_count, 3u);
  EXPECT_EQ(file->record_slots, kRecordSlots);
  EXPECT_TRUE(file->has_trailer);
  EXPECT_EQ(file->mapped_objects, kMaps);
}

TEST_P(GperfLayout, ConvertsToTheSameProfile) {
  const LayoutCase& c = GetParam();
  std::string bytes = encode(GperfEncoder(c.word_bytes, c.order), c.extra_header);
  core::Diagnostics diagnostics;
  auto p = gperf::read_profile(as_bytes(bytes), "synthetic", diagnostics);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_EQ(p->period, int64_t(kPeriodUs) * 1000);
  // Identical chains summed; callers minus one, the leaf as is.
  std::vector<WeightedStack> expected = {{2, {0xa0010, 0xbffff}},
                                         {8, {0xa0000, 0xbffff, 0xdffff}}};
  EXPECT_EQ(weighted_stacks(*p, 0), expected);
  std::vector<WeightedStack> expected_cpu = {{2 * 2500000, {0xa0010, 0xbffff}},
                                             {8 * 2500000, {0xa0000, 0xbffff, 0xdffff}}};
  EXPECT_EQ(weighted_stacks(*p, 1), expected_cpu);
  MappingView prog{0x90000, 0xf0000, 0, "/bin/prog"};
  for (const auto& [address, mapping] : mapping_by_address(*p)) EXPECT_EQ(mapping, prog);
  EXPECT_EQ(mapping_by_address(*p).size(), 4u);
  EXPECT_EQ(p->attribute("gperf.layout"), c.layout_name);
  EXPECT_EQ(p->attribute("gperf.records"), "3");

  // The streaming reader and the GperfFile route agree.
  auto file = gperf::read_gperf(as_bytes(bytes), "synthetic", diagnostics);
  ASSERT_TRUE(file);
  auto via_file = gperf::to_profile(*file, "synthetic", diagnostics);
  ASSERT_TRUE(via_file) << via_file.error().message;
  EXPECT_EQ(weighted_stacks(*via_file, 0), expected);
  EXPECT_EQ(mapping_by_address(*via_file), mapping_by_address(*p));
}

// A 64-bit file of the host's order is read in place when its words are aligned (a mapped
// file), and decoded word by word when they are not (the file's bytes at an odd address):
// both give the same stacks.
TEST_P(GperfLayout, ReadsTheSameFromAnUnalignedBuffer) {
  const LayoutCase& c = GetParam();
  std::string bytes = encode(GperfEncoder(c.word_bytes, c.order), c.extra_header);
  std::vector<uint8_t> shifted(bytes.size() + 1, 0);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  core::Diagnostics diagnostics;
  auto aligned = gperf::read_profile(as_bytes(bytes), "synthetic", diagnostics);
  auto unaligned = gperf::read_profile(std::span<const uint8_t>(shifted).subspan(1), "synthetic",
                                       diagnostics);
  ASSERT_TRUE(aligned) << aligned.error().message;
  ASSERT_TRUE(unaligned) << unaligned.error().message;
  std::vector<WeightedStack> expected = {{2, {0xa0010, 0xbffff}},
                                         {8, {0xa0000, 0xbffff, 0xdffff}}};
  EXPECT_EQ(weighted_stacks(*aligned, 0), expected);
  EXPECT_EQ(weighted_stacks(*unaligned, 0), expected);
}

TEST_P(GperfLayout, WritesBackTheSameBytes) {
  const LayoutCase& c = GetParam();
  std::string bytes = encode(GperfEncoder(c.word_bytes, c.order), c.extra_header);
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(as_bytes(bytes), "synthetic", diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(gperf::write_gperf(*file), bytes);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, GperfLayout,
    ::testing::Values(
        LayoutCase{"le32", 4, std::endian::little, {0}, "32-bit little-endian"},
        LayoutCase{"be32", 4, std::endian::big, {0}, "32-bit big-endian"},
        LayoutCase{"be64", 8, std::endian::big, {0}, "64-bit big-endian"},
        LayoutCase{"le64", 8, std::endian::little, {0}, "64-bit little-endian"},
        // "header slots after this one" = 5: three slots after the period to skip.
        LayoutCase{"le64_slots_after_5", 8, std::endian::little, {0, 7, 9},
                   "64-bit little-endian"},
        LayoutCase{"be32_slots_after_5", 4, std::endian::big, {1, 2, 3}, "32-bit big-endian"}),
    [](const auto& param_info) { return param_info.param.name; });

// A 32-bit little-endian header 0, 3, 0, period reads as 0, 0x03000000, 0, ... big-endian:
// also a valid header when the file is large enough to hold 0x03000000 header slots.
// The smaller header (the true one) must win.
TEST(GperfAmbiguousLayout, LittleEndian32WinsOverItsBigEndianReadingInAHugeFile) {
  GperfEncoder e(4, std::endian::little);
  e.header(100).record(1, {0x1234}).trailer();
  std::string bytes = e.bytes();
  bytes.resize((2 + 0x03000000) * 4 + 64, '\n');  // mapped objects: blank lines
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(as_bytes(bytes), "huge", diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->header.layout, (gperf::Layout{4, std::endian::little}));
  EXPECT_EQ(file->header.period_us, 100u);
  EXPECT_EQ(file->record_count, 1u);
}

// Slot 1 = 256 (bytes 00 01 00 00 little-endian) reads 65536 the other way round; with a
// file big enough for both, the byte order giving the smaller header is the right one.
TEST(GperfAmbiguousLayout, SmallerHeaderWinsInBothByteOrders) {
  for (std::endian order : {std::endian::little, std::endian::big}) {
    GperfEncoder e(4, order);
    e.header(256, std::vector<uint64_t>(254, 0)).record(7, {0x5000}).trailer();
    std::string bytes = e.bytes();
    bytes.resize((2 + 65536) * 4 + 64, '\n');
    core::Diagnostics diagnostics;
    auto file = gperf::read_gperf(as_bytes(bytes), "ambiguous", diagnostics);
    ASSERT_TRUE(file) << file.error().message;
    EXPECT_EQ(file->header.layout, (gperf::Layout{4, order}));
    EXPECT_EQ(file->header.slots_after_count, 256u);
    EXPECT_EQ(file->header.period_us, 256u);
    EXPECT_EQ(file->record_slots, (std::vector<uint64_t>{7, 1, 0x5000}));
  }
}

// A 32-bit big-endian header reads 0, 0x03000000, ... little-endian, which cannot fit in a
// small file: big-endian is the only layout left.
TEST(GperfAmbiguousLayout, HeaderLargerThanTheFileIsNotACandidate) {
  GperfEncoder e(4, std::endian::big);
  e.header(1).record(1, {0x10}).trailer();
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(as_bytes(e.bytes()), "be", diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->header.layout, (gperf::Layout{4, std::endian::big}));
  EXPECT_TRUE(gperf::looks_like_gperf(as_bytes(e.bytes())));
}

}  // namespace
}  // namespace tally::test
