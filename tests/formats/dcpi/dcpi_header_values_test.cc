// The values of the header lines the spec types: hex digits, decimal digits, the version,
// and the epoch time (YYMMDDHHMM, and the long form YYYYMMDDHHMMSS).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dcpi_read_helpers.h"

namespace tally::dcpi::test {
namespace {

using testing::HasSubstr;

struct BadValue {
  std::string line;  // replaces the line with the same key (or is appended: optional keys)
  int line_no;       // where it is in the file
};

// required_lines() order: version 1, image 2, epoch 3, platform 4, event 5, period 6,
// tstart 7, tsize 8, cpuspeed 9; optional lines are appended as line 10.
std::vector<std::string> lines_with(const std::string& line) {
  std::string key = line.substr(0, line.find_first_of(" \t"));
  for (const std::string& l : required_lines())
    if (l.starts_with(key + " ")) return with_line(key, line);
  std::vector<std::string> lines = required_lines();
  lines.push_back(line);
  return lines;
}

class RejectedValue : public testing::TestWithParam<BadValue> {};

TEST_P(RejectedValue, IsAnErrorWithTheLineNumber) {
  const BadValue& bad = GetParam();
  std::string message = read_error(file_with(lines_with(bad.line)));
  EXPECT_THAT(message, HasSubstr("t.dcpi: line " + std::to_string(bad.line_no) + ":"));
}

INSTANTIATE_TEST_SUITE_P(
    HexFields, RejectedValue,
    testing::Values(BadValue{"image 1a2g", 2}, BadValue{"image 0x1a2b", 2},
                    BadValue{"image -1", 2}, BadValue{"tstart 12000000z", 7},
                    BadValue{"tstart 0x120000000", 7}, BadValue{"tstart 120000000 ", 7},
                    BadValue{"tstart 10000000000000000", 7},  // 17 hex digits: past 64 bits
                    BadValue{"cpuamask fg", 10}, BadValue{"cpuamask f f", 10}));

INSTANTIATE_TEST_SUITE_P(
    DecimalFields, RejectedValue,
    testing::Values(BadValue{"period 12a", 6}, BadValue{"period -5", 6},
                    BadValue{"period +5", 6}, BadValue{"period 0x10", 6},
                    BadValue{"tsize 1e3", 8}, BadValue{"tsize 4096 ", 8},
                    BadValue{"tsize 18446744073709551616", 8},  // 2^64
                    BadValue{"cpuspeed 3.5", 9}, BadValue{"cpuimplv x", 10},
                    BadValue{"cpucount two", 10}, BadValue{"cpucount 1 2", 10}));

INSTANTIATE_TEST_SUITE_P(
    Epochs, RejectedValue,
    testing::Values(BadValue{"epoch 990701123", 3},      // 9 digits
                    BadValue{"epoch 99070112300", 3},    // 11 digits
                    BadValue{"epoch 199907011230", 3},   // 12 digits
                    BadValue{"epoch 990701123a", 3}, BadValue{"epoch 9913011230", 3},  // month 13
                    BadValue{"epoch 9900011230", 3},                                   // month 0
                    BadValue{"epoch 9907001230", 3},                                   // day 0
                    BadValue{"epoch 9904311230", 3},                                   // Apr 31
                    BadValue{"epoch 2302291230", 3},  // 2023 is no leap year
                    BadValue{"epoch 9907012400", 3},  // hour 24
                    BadValue{"epoch 9907011260", 3},  // minute 60
                    BadValue{"epoch 19000229120000", 3},  // 1900 is no leap year
                    BadValue{"epoch 20240230120000", 3},  // Feb 30
                    BadValue{"epoch 20240101120061", 3},  // second 61
                    BadValue{"epoch 20241301120000", 3}));

INSTANTIATE_TEST_SUITE_P(
    Versions, RejectedValue,
    testing::Values(BadValue{"version 0.07", 1}, BadValue{"version pdb-0", 1},
                    BadValue{"version pdb-.07", 1}, BadValue{"version pdb-0.", 1},
                    BadValue{"version pdb-0.07a", 1}, BadValue{"version pdb-x.07", 1},
                    BadValue{"version PDB-0.07", 1}));

class AcceptedValue : public testing::TestWithParam<std::string> {};

TEST_P(AcceptedValue, IsRead) {
  auto f = read_string(file_with(lines_with(GetParam())));
  EXPECT_TRUE(f) << f.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    All, AcceptedValue,
    testing::Values("image DEADbeef09", "image 0", "tstart aBcDeF", "tstart ffffffffffff0000",
                    "cpuamask FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",  // a mask, not a number
                    "period 0", "period 000123", "tsize 0", "cpuspeed 18446744073709551615",
                    "version pdb-0.06", "version pdb-0.07", "version\tpdb-0.07",
                    "epoch 0002291200",       // 2000 is a leap year
                    "epoch 20240229123059",   // long form
                    "epoch 6812312359", "epoch 6901010000"));

TEST(DcpiVersion, MajorVersion1IsNotDocumentedAndUnsupported) {
  std::string message = read_error(file_with(with_line("version", "version pdb-1.01")));
  EXPECT_THAT(message, HasSubstr("t.dcpi: line 1:"));
  EXPECT_THAT(message, HasSubstr("not documented"));
  EXPECT_THAT(message, HasSubstr("unsupported"));
}

TEST(DcpiVersion, OtherMajorVersionsAreUnsupported) {
  for (std::string v : {"pdb-2.0", "pdb-10.07"}) {
    std::string message = read_error(file_with(with_line("version", "version " + v)));
    EXPECT_THAT(message, HasSubstr("t.dcpi: line 1:"));
    EXPECT_THAT(message, HasSubstr("unsupported")) << v;
  }
}

TEST(DcpiVersion, TheMinorVersionIsKept) {
  auto f = read_string(file_with(with_line("version", "version pdb-0.06")));
  ASSERT_TRUE(f) << f.error().message;
  auto fields = parse_fields(*f, "t.dcpi");
  ASSERT_TRUE(fields) << fields.error().message;
  EXPECT_EQ(fields->major, 0u);
  EXPECT_EQ(fields->minor, 6u);
}

struct EpochCase {
  std::string text;
  int year, month, day, hour, minute, second;
  int64_t unix_seconds;  // from `date -u -d '...' +%s`
};

class EpochValue : public testing::TestWithParam<EpochCase> {};

TEST_P(EpochValue, GivesTheCalendarTimeInUtc) {
  const EpochCase& c = GetParam();
  auto f = read_string(file_with(with_line("epoch", "epoch " + c.text)));
  ASSERT_TRUE(f) << f.error().message;
  auto fields = parse_fields(*f, "t.dcpi");
  ASSERT_TRUE(fields) << fields.error().message;
  const Epoch& e = fields->epoch;
  EXPECT_EQ(e.year, c.year);
  EXPECT_EQ(e.month, c.month);
  EXPECT_EQ(e.day, c.day);
  EXPECT_EQ(e.hour, c.hour);
  EXPECT_EQ(e.minute, c.minute);
  EXPECT_EQ(e.second, c.second);
  EXPECT_EQ(e.long_form, c.text.size() == 14);
  EXPECT_EQ(e.unix_seconds(), c.unix_seconds);
  EXPECT_EQ(e.format(), c.text);  // written back as read
}

// Two-digit years: 69..99 are 1969..1999, 00..68 are 2000..2068 (the POSIX %y pivot).
INSTANTIATE_TEST_SUITE_P(
    All, EpochValue,
    testing::Values(EpochCase{"9907011230", 1999, 7, 1, 12, 30, 0, 930832200},
                    EpochCase{"6901010000", 1969, 1, 1, 0, 0, 0, -31536000},
                    EpochCase{"6812312359", 2068, 12, 31, 23, 59, 0, 3124223940},
                    EpochCase{"0002291200", 2000, 2, 29, 12, 0, 0, 951825600},
                    EpochCase{"7001010000", 1970, 1, 1, 0, 0, 0, 0},
                    EpochCase{"20240229123059", 2024, 2, 29, 12, 30, 59, 1709209859},
                    EpochCase{"19990701123000", 1999, 7, 1, 12, 30, 0, 930832200}));

}  // namespace
}  // namespace tally::dcpi::test
