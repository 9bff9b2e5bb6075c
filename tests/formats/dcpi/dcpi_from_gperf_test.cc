// gperftools profile -> DCPI, checked against leaf counts found by a tiny independent
// parse of the same bytes (64-bit little-endian slots; leaf = first PC of each record;
// image = the executable /proc/self/maps line that holds the leaf).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "dcpi_histogram.h"
#include "dcpi_read_helpers.h"
#include "formats/dcpi/dcpi_convert.h"
#include "formats/gperf/gperf_convert.h"
#include "support/test_support.h"

namespace tally::dcpi::test {
namespace {

struct LeafCounts {
  uint64_t period_us = 0;
  uint64_t total = 0;
  uint64_t unmapped = 0;                  // leaves in no executable maps line
  std::map<std::string, Histogram> by_path;  // executable maps lines' paths
  std::map<std::string, uint64_t> start;     // first executable line's start per path
};

uint64_t slot(const std::vector<uint8_t>& b, size_t i) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + 8 * i, 8);  // the fixture is little-endian, as is the host
  return v;
}

LeafCounts independent_leaf_counts(const std::vector<uint8_t>& b) {
  LeafCounts out;
  size_t i = 2 + slot(b, 1);  // count, "slots after this one", the rest of the header
  out.period_us = slot(b, 3);
  std::vector<std::pair<uint64_t, uint64_t>> leaves;  // pc, count
  while (true) {
    uint64_t count = slot(b, i), n = slot(b, i + 1);
    if (count == 0 && n == 1 && slot(b, i + 2) == 0) break;
    leaves.push_back({slot(b, i + 2), count});
    out.total += count;
    i += 2 + n;
  }
  std::istringstream maps(std::string(b.begin() + static_cast<long>(8 * (i + 3)), b.end()));
  struct Line {
    uint64_t start, limit;
    std::string path;
  };
  std::vector<Line> exec;
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    if (!(fields >> range >> perms >> offset >> dev >> inode)) continue;
    fields >> path;
    if (perms.size() < 3 || perms[2] != 'x' || range.find('-') == std::string::npos) continue;
    uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    uint64_t limit = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    exec.push_back({start, limit, path});
    out.start.emplace(path, start);
  }
  for (auto [pc, count] : leaves) {
    bool found = false;
    for (const Line& l : exec)
      if (l.start <= pc && pc < l.limit) {
        out.by_path[l.path][pc] += count;
        found = true;
        break;
      }
    if (!found) out.unmapped += count;
  }
  return out;
}

bool any_warning_has(const core::Diagnostics& d, const std::string& text) {
  for (const std::string& w : d.warnings())
    if (w.find(text) != std::string::npos) return true;
  return false;
}

TEST(DcpiFromGperf, ShlibFixtureGivesOneFilePerImageWithItsLeafCounts) {
  const std::string path = tally::test::shared("fixtures/gperf/shlib.prof");
  const std::vector<uint8_t> bytes = tally::test::read_bytes(path);
  const LeafCounts expected = independent_leaf_counts(bytes);
  ASSERT_EQ(expected.total, 280u) << "the fixture changed";  // pprof -raw: 280 samples
  ASSERT_EQ(expected.by_path.size(), 2u);

  core::Diagnostics diagnostics;
  auto profile = gperf::read_profile(bytes, path, diagnostics);
  ASSERT_TRUE(profile) << profile.error().message;
  auto images = from_profile(*profile, diagnostics);
  ASSERT_TRUE(images) << images.error().message;
  ASSERT_EQ(images->size(), expected.by_path.size());

  uint64_t written_total = 0;
  for (const Image& image : *images) {
    const std::string image_path = header_value(image.file, "path");
    SCOPED_TRACE(image_path);
    ASSERT_TRUE(expected.by_path.count(image_path));
    EXPECT_EQ(histogram_of(image.file), expected.by_path.at(image_path));
    EXPECT_EQ(hex_value(image.file, "tstart"), expected.start.at(image_path));
    EXPECT_EQ(header_value(image.file, "event"), "cpu");
    EXPECT_EQ(header_value(image.file, "period"), std::to_string(expected.period_us * 1000));
    written_total += image.file.total_samples();
    // Each file is valid by the reader's rules and rewrites to the same bytes.
    auto bytes_out = write_dcpi(image.file);
    ASSERT_TRUE(bytes_out) << bytes_out.error().message;
    core::Diagnostics reread_diagnostics;
    auto reread = read_string(*bytes_out, reread_diagnostics);
    ASSERT_TRUE(reread) << reread.error().message;
    EXPECT_TRUE(reread_diagnostics.empty()) << reread_diagnostics.warnings()[0];
    EXPECT_EQ(write_dcpi(*reread).value(), *bytes_out);
  }
  EXPECT_EQ(written_total + expected.unmapped, expected.total);
  // The leaf sums pprof -raw shows for this fixture (shlib.pb.raw.txt): 64+16+1 in the
  // executable, 30+112+1+1+46+9 in the library; a check on the independent parse.
  EXPECT_EQ(total_of(expected.by_path.at("/tmp/tally-fx/bin/shlib_main")), 81u);
  EXPECT_EQ(total_of(expected.by_path.at("/tmp/tally-fx/bin/libtallywork.so")), 199u);
  if (expected.unmapped > 0) {
    EXPECT_TRUE(any_warning_has(diagnostics, "outside"));
  }
  EXPECT_TRUE(any_warning_has(diagnostics, "call stacks dropped"));
}

// A hand-built gperftools profile (64-bit little-endian) whose records are given as slots.
std::string gperf_file(const std::vector<uint64_t>& record_slots, const std::string& maps) {
  std::string out;
  auto put = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  for (uint64_t v : {0, 3, 0, 1000, 0}) put(v);
  for (uint64_t v : record_slots) put(v);
  for (uint64_t v : {0, 1, 0}) put(v);
  return out + maps;
}

TEST(DcpiFromGperf, LeavesOutsideEveryExecutableMappingAreReportedNotWritten) {
  // 4 samples in /bin/app's text, 6 at 0x10 (no mapping), 5 in its data (not executable).
  std::string maps =
      "00400000-00401000 r-xp 00000000 08:01 1 /bin/app\n"
      "00600000-00601000 rw-p 00000000 08:01 1 /bin/app\n";
  std::string file = gperf_file({4, 2, 0x400010, 0x400500, 6, 1, 0x10, 5, 1, 0x600010}, maps);
  const std::vector<uint8_t> bytes(file.begin(), file.end());
  const LeafCounts expected = independent_leaf_counts(bytes);
  ASSERT_EQ(expected.unmapped, 11u);

  core::Diagnostics diagnostics;
  auto profile = gperf::read_profile(bytes, "hand.prof", diagnostics);
  ASSERT_TRUE(profile) << profile.error().message;
  auto images = from_profile(*profile, diagnostics);
  ASSERT_TRUE(images) << images.error().message;
  ASSERT_EQ(images->size(), 1u);
  EXPECT_EQ(header_value((*images)[0].file, "path"), "/bin/app");
  EXPECT_EQ(histogram_of((*images)[0].file), expected.by_path.at("/bin/app"));
  EXPECT_TRUE(any_warning_has(diagnostics, "outside")) << testing::PrintToString(diagnostics.warnings());
  EXPECT_TRUE(any_warning_has(diagnostics, "11")) << testing::PrintToString(diagnostics.warnings());
}

}  // namespace
}  // namespace tally::dcpi::test
