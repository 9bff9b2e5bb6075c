// `tally cat` on the real gperftools fixtures: its header, every record and the mapped
// objects must match an independent decode of the same file (gperf_decoder.h).
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "gperf_decoder.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

struct PrintedRecord {
  uint64_t index = 0, offset = 0, count = 0;
  std::vector<uint64_t> pcs;
};

// "record N at byte B: count C, K pcs: 0x.. 0x.."
bool parse_record_line(const std::string& line, PrintedRecord& r) {
  uint64_t declared = 0;
  int rest = 0;
  if (std::sscanf(line.c_str(), "record %" SCNu64 " at byte %" SCNu64 ": count %" SCNu64
                                ", %" SCNu64 " pcs:%n",
                  &r.index, &r.offset, &r.count, &declared, &rest) < 4)
    return false;
  std::istringstream pcs(line.substr(static_cast<size_t>(rest)));
  std::string pc;
  while (pcs >> pc) r.pcs.push_back(std::stoull(pc, nullptr, 16));
  return r.pcs.size() == declared;
}

std::vector<PrintedRecord> printed_records(const std::string& out) {
  std::vector<PrintedRecord> records;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("record ")) continue;
    PrintedRecord r;
    EXPECT_TRUE(parse_record_line(line, r)) << "malformed record line: " << line;
    records.push_back(std::move(r));
  }
  return records;
}

class CatGperf : public ::testing::TestWithParam<GperfFixture> {};

TEST_P(CatGperf, PrintsHeaderEveryRecordAndTheMappedObjects) {
  const std::string path = shared("fixtures/gperf/" + GetParam().name + ".prof");
  const DecodedGperf expected = decode_gperf64le(read_bytes(path));
  RunResult r = run_tally({"cat", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  std::string header_line = "header";
  for (uint64_t slot : expected.header) header_line += " " + std::to_string(slot);
  EXPECT_NE(r.out.find(header_line + "\n"), std::string::npos) << header_line;
  EXPECT_NE(r.out.find("period " + std::to_string(expected.period_us) + " us\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("64-bit little-endian"), std::string::npos);

  std::vector<PrintedRecord> printed = printed_records(r.out);
  ASSERT_EQ(printed.size(), expected.records.size());
  for (size_t i = 0; i < printed.size(); ++i) {
    SCOPED_TRACE("record " + std::to_string(i + 1));
    EXPECT_EQ(printed[i].index, i + 1);
    EXPECT_EQ(printed[i].offset, expected.records[i].offset);
    EXPECT_EQ(printed[i].count, expected.records[i].count);
    EXPECT_EQ(printed[i].pcs, expected.records[i].pcs);
  }
  EXPECT_NE(r.out.find("trailer 0 1 0\n"), std::string::npos);
  EXPECT_NE(r.out.find("# " + std::to_string(expected.records.size()) + " records, " +
                       std::to_string(expected.total_samples()) + " samples\n"),
            std::string::npos);
  // The text part is printed verbatim, after the binary part.
  ASSERT_FALSE(expected.maps_text.empty());
  size_t maps_at = r.out.find(expected.maps_text);
  ASSERT_NE(maps_at, std::string::npos) << "mapped objects not printed verbatim";
  EXPECT_GT(maps_at, r.out.find("trailer 0 1 0"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CatGperf, ::testing::ValuesIn(gperf_fixtures()),
                         [](const ::testing::TestParamInfo<GperfFixture>& fixture) {
                           std::string n = fixture.param.name;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// A record count and PCs that no fixture has, from the test's own encoder: the printed
// values must be the encoded ones, not values that merely happen to match a fixture.
TEST(CatGperfSynthetic, PrintsExactlyTheEncodedRecords) {
  std::vector<DecodedRecord> records = {
      {0, 7, {0x401000, 0x402001, 0x403002}},
      {0, 123456789, {0xffffffffffff0000}},
  };
  std::string maps = "00400000-00500000 r-xp 00000000 08:01 42 /opt/synthetic/app\n";
  TempDir dir;
  write_bytes(dir.file("synthetic.prof"), encode_gperf64le(2500, records, maps));
  RunResult r = run_tally({"cat", dir.file("synthetic.prof")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("header 0 3 0 2500 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("record 1 at byte 40: count 7, 3 pcs: 0x401000 0x402001 0x403002\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("record 2 at byte 80: count 123456789, 1 pcs: 0xffffffffffff0000\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# 2 records, 123456796 samples\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(maps), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tally::test
