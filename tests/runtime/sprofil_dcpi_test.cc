// tally_sprofil_write_dcpi(): a region histogram as a DCPI file that `tally cat` reads
// with each count at the address the spec's scale puts its counter's first byte (the
// region's own first byte of the bin where another region overlaps it), and that
// `tally top` symbolizes.
#include <gtest/gtest.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <sstream>

#include "burn.h"
#include "support/test_support.h"
#include "tally/sprofil.h"

namespace tally::test {
namespace {

struct Printed {
  std::string header;
  std::map<uint64_t, uint64_t> counts;  // address -> count
};

// `tally cat` on a DCPI file: the header lines, then "0xADDRESS COUNT" lines.
Printed cat(const std::string& file) {
  RunResult r = run_tally({"cat", file});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Printed p;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    uint64_t address = 0, count = 0;
    char extra = 0;
    if (std::sscanf(line.c_str(), "0x%" SCNx64 " %" SCNu64 "%c", &address, &count, &extra) == 2)
      p.counts[address] = count;
    else
      p.header += line + "\n";
  }
  return p;
}

TEST(SprofilDcpi, EachCountAtTheFirstAddressItsRegionOwns) {
  // R0: 2 bytes of text per counter (scale 65536). R1: 8 bytes per counter (scale 16384).
  // R2: 2 bytes per counter, over [0x10114, 0x1011c), inside R1's counters 2 and 3
  // ([0x10110, 0x10118) and [0x10118, 0x10120)), so R1 keeps 0x10110..0x10113 of its
  // counter 2 and 0x1011c..0x1011f of its counter 3.
  uint16_t r0[16] = {}, r1[8] = {}, r2[4] = {}, overflow = 11;
  r0[0] = 5;
  r0[3] = 7;
  r0[15] = 1;
  r1[1] = 2;
  r1[2] = 6;
  r1[3] = 8;
  r1[7] = 9;
  r2[0] = 3;
  r2[3] = 4;
  prof entries[4] = {};
  entries[0] = {r0, sizeof r0, {0x10000}, 65536};
  entries[1] = {r1, sizeof r1, {0x10100}, 16384};
  entries[2] = {r2, sizeof r2, {0x10114}, 65536};
  entries[3] = {&overflow, sizeof overflow, {0}, 2};
  TempDir dir;
  const std::string file = dir.file("hist.dcpi");
  ASSERT_EQ(tally_sprofil_write_dcpi(entries, 4, PROF_USHORT, file.c_str()), 0);

  const Printed p = cat(file);
  const std::map<uint64_t, uint64_t> expected = {
      {0x10000, 5},                                // R0 counter 0
      {0x10006, 7},                                // R0 counter 3: 3 x 2 bytes
      {0x1001e, 1},                                // R0 counter 15
      {0x10108, 2},                                // R1 counter 1: 1 x 8 bytes
      {0x10110, 6},                                // R1 counter 2, its own part
      {0x1011c, 8},                                // R1 counter 3, past R2
      {0x10138, 9},                                // R1 counter 7
      {0x10114, 3},                                // R2 counter 0
      {0x1011a, 4},                                // R2 counter 3
  };
  EXPECT_EQ(p.counts, expected);
  EXPECT_NE(p.header.find("tstart 10000\n"), std::string::npos) << p.header;
  EXPECT_NE(p.header.find("tsize 320\n"), std::string::npos) << p.header;  // to 0x10140
  EXPECT_NE(p.header.find("sprofiloverflow 11\n"), std::string::npos) << p.header;
  EXPECT_NE(p.header.find("event cpu\n"), std::string::npos) << p.header;
  EXPECT_NE(p.header.find("eventunit nanoseconds\n"), std::string::npos) << p.header;
}

TEST(SprofilDcpi, CountsAboveThirtyTwoBitsOrSpansAboveFourGiBAreRefused) {
  uint64_t big[2] = {uint64_t{1} << 32, 0};
  prof wide = {big, sizeof big, {0x10000}, 65536 * 4};
  TempDir dir;
  errno = 0;
  EXPECT_EQ(tally_sprofil_write_dcpi(&wide, 1, PROF_UINT64, dir.file("a").c_str()), -1);
  EXPECT_EQ(errno, EOVERFLOW);
  uint16_t c[1] = {1};
  prof far[2] = {{c, sizeof c, {0x10000}, 65536}, {c, sizeof c, {0x10000 + (uint64_t{5} << 30)}, 65536}};
  errno = 0;
  EXPECT_EQ(tally_sprofil_write_dcpi(far, 2, PROF_USHORT, dir.file("b").c_str()), -1);
  EXPECT_EQ(errno, EOVERFLOW);
  errno = 0;
  prof bad = {c, 3, {0x10000}, 65536};
  EXPECT_EQ(tally_sprofil_write_dcpi(&bad, 1, PROF_USHORT, dir.file("c").c_str()), -1);
  EXPECT_EQ(errno, EINVAL);
}

// Real ticks in burn_a, written out: the file names the test program, so `tally top`
// puts nearly every tick in burn_a.
TEST(SprofilDcpi, ProfiledFunctionIsOnTopOfTallyTop) {
  Histogram a(burn_a_range());
  prof one = a.entry();
  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);
  burn_a(200'000'000);
  ASSERT_EQ(tally_sprofil(nullptr, 0, nullptr, 0), 0);
  ASSERT_GT(a.total(), 10u);
  TempDir dir;
  const std::string file = dir.file("burn.dcpi");
  ASSERT_EQ(tally_sprofil_write_dcpi(&one, 1, PROF_USHORT, file.c_str()), 0);

  const Printed p = cat(file);
  uint64_t sum = 0;
  for (auto [address, n] : p.counts) {
    EXPECT_GE(address, a.range.start);
    EXPECT_LT(address, a.range.end);
    sum += n;
  }
  EXPECT_EQ(sum, a.total());
  EXPECT_NE(p.header.find("path /"), std::string::npos) << p.header;

  RunResult top = run_tally({"top", "--sample-index", "samples", file});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  // The first row after the column titles is burn_a with all the samples.
  const std::vector<TopRow> rows = top_rows(top.out);
  ASSERT_FALSE(rows.empty()) << top.out;
  EXPECT_EQ(rows[0].flat, std::to_string(a.total())) << top.out;
  EXPECT_EQ(rows[0].flat_percent, "100%") << top.out;
  EXPECT_NE(rows[0].name.find("burn_a"), std::string::npos) << top.out;
}

}  // namespace
}  // namespace tally::test
