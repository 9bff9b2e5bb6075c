// What the reader refuses, where it says the problem is, and what it accepts with a
// warning. Byte offsets are computed by hand from the layout: a 64-bit header
// 0, 3, 0, period, 0 is 40 bytes, so the first record starts at byte 40.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "allocation_probe.h"
#include "core/diagnostics.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/gperf_file.h"
#include "gperf_encoder.h"
#include "profile_view.h"

namespace tally::test {
namespace {

GperfEncoder le64() { return GperfEncoder(8, std::endian::little); }

// Both entry points (the GperfFile reader and the streaming converter) must fail alike.
void expect_rejected(const std::string& bytes, const std::string& where,
                     const std::string& what = "") {
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(as_bytes(bytes), "bad.prof", diagnostics);
  ASSERT_FALSE(file);
  EXPECT_TRUE(file.error().message.starts_with("bad.prof: " + where + ":"))
      << file.error().message;
  EXPECT_NE(file.error().message.find(what), std::string::npos) << file.error().message;
  auto profile = gperf::read_profile(as_bytes(bytes), "bad.prof", diagnostics);
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message, file.error().message);
}

TEST(GperfHeader, PeriodZeroIsRejected) {
  expect_rejected(le64().words({0, 3, 0, 0, 0}).trailer().bytes(), "byte 0");
}

TEST(GperfHeader, VersionOtherThanZeroIsRejected) {
  expect_rejected(le64().words({0, 3, 1, 1000, 0}).trailer().bytes(), "byte 0");
}

TEST(GperfHeader, HeaderCountOtherThanZeroIsRejected) {
  expect_rejected(le64().words({1, 3, 0, 1000, 0}).trailer().bytes(), "byte 0");
}

TEST(GperfHeader, FewerThanThreeSlotsAfterIsRejected) {
  expect_rejected(le64().words({0, 2, 0, 1000}).trailer().bytes(), "byte 0");
}

TEST(GperfHeader, EmptyAndTinyInputsAreRejected) {
  expect_rejected("", "byte 0");
  expect_rejected(std::string(7, '\0'), "byte 0");
  expect_rejected("00400000-00401000 r-xp 00000000 00:00 0 /bin/x\n", "byte 0");
}

TEST(GperfRecords, CountZeroThatIsNotTheTrailerIsRejectedAtItsOffset) {
  // Record 1 at byte 40 (24 bytes), then count 0 at byte 64.
  expect_rejected(le64().header(1000).record(1, {0x1000}).words({0, 2, 0x1, 0x2}).bytes(),
                  "byte 64", "count 0");
  // count 0, one PC that is not 0: looks like a trailer but is not one.
  expect_rejected(le64().header(1000).record(1, {0x1000}).words({0, 1, 0x5}).trailer().bytes(),
                  "byte 64", "count 0");
}

TEST(GperfRecords, ZeroPcsIsRejectedAtTheNumPcsSlot) {
  expect_rejected(le64().header(1000).words({3, 0}).trailer().bytes(), "byte 48", "0 PCs");
}

TEST(GperfRecords, HugeNumPcsIsRejectedWithoutAllocatingForIt) {
  struct Case {
    unsigned word_bytes;
    uint64_t num_pcs;
    std::string where;  // the num_pcs slot: header is 5 slots, then the count
  };
  for (const Case& c : {Case{8, uint64_t(1) << 60, "byte 48"},
                        Case{8, UINT64_MAX, "byte 48"},
                        Case{8, uint64_t(1) << 20, "byte 48"},
                        Case{4, 0xffffffff, "byte 24"}}) {
    GperfEncoder e(c.word_bytes, std::endian::little);
    std::string bytes = e.header(1000).words({1, c.num_pcs, 0x10, 0x20}).trailer().bytes();
    AllocationProbe probe;
    expect_rejected(bytes, c.where, "PCs follow");
    // Each claim is >= 8 MB of PCs; the reader's own fixed-size tables stay far below.
    EXPECT_LT(probe.largest(), 64u * 1024) << "num_pcs " << c.num_pcs;
  }
}

// The file layer keeps any count; the profile's values are signed 64-bit, so a count that
// does not fit is refused at its record rather than turned negative.
TEST(GperfRecords, CountBeyondInt64IsRefusedByTheConversionAtItsRecord) {
  std::string bytes =
      le64().header(1000).record(1, {0x10}).record(uint64_t(1) << 63, {0x20}).trailer().bytes();
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(as_bytes(bytes), "big.prof", diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->record_slots[3], uint64_t(1) << 63);
  auto p = gperf::read_profile(as_bytes(bytes), "big.prof", diagnostics);
  ASSERT_FALSE(p);
  EXPECT_TRUE(p.error().message.starts_with("big.prof: byte 64:")) << p.error().message;
  auto via_file = gperf::to_profile(*file, "big.prof", diagnostics);
  ASSERT_FALSE(via_file);
  EXPECT_EQ(via_file.error().message, p.error().message);
}

TEST(GperfRecords, MissingTrailerAtARecordBoundaryGivesAWarningAndAValidProfile) {
  std::string bytes = le64().header(1000).record(4, {0x1000, 0x2001}).record(1, {0x1000}).bytes();
  ASSERT_EQ(bytes.size(), 40u + 32 + 24);
  core::Diagnostics diagnostics;
  auto p = gperf::read_profile(as_bytes(bytes), "cut.prof", diagnostics);
  ASSERT_TRUE(p) << p.error().message;
  std::vector<WeightedStack> expected = {{1, {0x1000}}, {4, {0x1000, 0x2000}}};
  EXPECT_EQ(weighted_stacks(*p), expected);
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  EXPECT_NE(diagnostics.warnings()[0].find("cut.prof: byte 96"), std::string::npos)
      << diagnostics.warnings()[0];
  EXPECT_NE(diagnostics.warnings()[0].find("trailer"), std::string::npos);

  core::Diagnostics file_diagnostics;
  auto file = gperf::read_gperf(as_bytes(bytes), "cut.prof", file_diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_FALSE(file->has_trailer);
  EXPECT_EQ(file->record_count, 2u);
  EXPECT_TRUE(file->mapped_objects.empty());
  EXPECT_EQ(file_diagnostics.warnings().size(), 1u);
  // Written back as it was: without a trailer.
  EXPECT_EQ(gperf::write_gperf(*file), bytes);
}

TEST(GperfRecords, TruncatedInsideARecordIsAnErrorWithTheOffset) {
  // count 1, num_pcs 3 at byte 48, but only two PCs follow.
  expect_rejected(le64().header(1000).words({1, 3, 0x10, 0x20}).bytes(), "byte 48",
                  "only 2 words remain");
  // Three bytes of a record: not even its count.
  std::string cut = le64().header(1000).record(1, {0x10}).bytes().substr(0, 43);
  expect_rejected(cut, "byte 40", "only 3 bytes remain");
}

// Every possible cut of a small valid file: at a record boundary a warning and the records
// before the cut, inside a record or the header an error at or before the cut, after the
// trailer a complete profile.
TEST(GperfRecords, EveryTruncationIsAnErrorOrAWarnedPrefix) {
  for (unsigned w : {4u, 8u}) {
    for (std::endian order : {std::endian::little, std::endian::big}) {
      GperfEncoder e(w, order);
      e.header(1000);
      std::vector<size_t> boundaries = {e.size()};
      e.record(2, {0x1000, 0x2001, 0x3001});
      boundaries.push_back(e.size());
      e.record(3, {0x1100});
      boundaries.push_back(e.size());
      e.trailer();
      const size_t binary_end = e.size();
      e.text("00001000-00004000 r-xp 00000000 00:00 1 /bin/x\n");
      const std::string& full = e.bytes();
      for (size_t cut = 0; cut <= full.size(); ++cut) {
        SCOPED_TRACE("word " + std::to_string(w) + " cut " + std::to_string(cut));
        std::string bytes = full.substr(0, cut);
        core::Diagnostics diagnostics;
        auto p = gperf::read_profile(as_bytes(bytes), "cut", diagnostics);
        auto boundary = std::find(boundaries.begin(), boundaries.end(), cut);
        if (cut >= binary_end) {
          ASSERT_TRUE(p) << p.error().message;
          EXPECT_TRUE(diagnostics.empty());
          EXPECT_EQ(p->total(0), 5);
        } else if (boundary != boundaries.end()) {
          ASSERT_TRUE(p) << p.error().message;
          EXPECT_EQ(diagnostics.warnings().size(), 1u);
          int64_t expected_total = std::array<int64_t, 3>{0, 2, 5}[boundary - boundaries.begin()];
          EXPECT_EQ(p->total(0), expected_total);
        } else {
          ASSERT_FALSE(p);
          const std::string& m = p.error().message;
          ASSERT_TRUE(m.starts_with("cut: byte ")) << m;
          EXPECT_LE(std::stoull(m.substr(10)), cut) << m;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tally::test
