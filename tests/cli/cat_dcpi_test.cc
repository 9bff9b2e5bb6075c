// `tally cat` on DCPI files that `tally convert --to dcpi` wrote from the gperf fixtures:
// the header lines, and address/count lines that agree with the file's own footer, with an
// independent decode of its chunks, and with the leaf counts of the gperf records.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "gperf_decoder.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

uint32_t u32le(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t(b.at(at)) | uint32_t(b.at(at + 1)) << 8 | uint32_t(b.at(at + 2)) << 16 |
         uint32_t(b.at(at + 3)) << 24;
}

// dcpiformat(4): "key value" lines up to "samples", chunks (offset, number, counts),
// footer (addresses with samples, total samples).
struct DecodedDcpi {
  std::vector<std::string> header_lines;
  std::map<std::string, std::string> fields;
  std::map<uint64_t, uint64_t> counts;  // offset from tstart -> count (non-zero only)
  uint32_t footer_offsets = 0, footer_samples = 0;
};

DecodedDcpi decode_dcpi(const std::vector<uint8_t>& bytes) {
  DecodedDcpi d;
  size_t pos = 0;
  while (true) {
    size_t end = pos;
    while (bytes.at(end) != '\n') ++end;
    std::string line(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                     bytes.begin() + static_cast<std::ptrdiff_t>(end));
    pos = end + 1;
    if (line.find_first_not_of(' ', 7) == std::string::npos && line.starts_with("samples")) break;
    d.header_lines.push_back(line);
    size_t space = line.find(' ');
    d.fields[line.substr(0, space)] = line.substr(space + 1);
  }
  const size_t footer = bytes.size() - 8;
  while (pos < footer) {
    uint32_t offset = u32le(bytes, pos), number = u32le(bytes, pos + 4);
    pos += 8;
    for (uint32_t i = 0; i < number; ++i, pos += 4)
      if (uint32_t n = u32le(bytes, pos)) d.counts[uint64_t(offset) + i] = n;
  }
  d.footer_offsets = u32le(bytes, footer);
  d.footer_samples = u32le(bytes, footer + 4);
  return d;
}

struct PrintedDcpi {
  std::map<uint64_t, uint64_t> counts;  // address -> count
  uint64_t sum = 0;
};

PrintedDcpi printed_counts(const std::string& out) {
  PrintedDcpi p;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    uint64_t address = 0, count = 0;
    char extra = 0;
    if (std::sscanf(line.c_str(), "0x%" SCNx64 " %" SCNu64 "%c", &address, &count, &extra) != 2)
      continue;
    EXPECT_EQ(p.counts.count(address), 0u) << "address printed twice: " << line;
    p.counts[address] = count;
    p.sum += count;
  }
  return p;
}

// Every DCPI file the conversion of `fixture` wrote (a directory of them, or one file).
std::vector<std::string> convert_to_dcpi(const std::string& fixture, const TempDir& dir) {
  const std::string out = dir.file(fixture + ".dcpi");
  RunResult r = run_tally({"convert", shared("fixtures/gperf/" + fixture + ".prof"), "-o", out,
                           "--to", "dcpi"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files;
  if (std::filesystem::is_directory(out)) {
    for (const auto& e : std::filesystem::directory_iterator(out)) files.push_back(e.path());
  } else if (std::filesystem::exists(out)) {
    files.push_back(out);
  }
  return files;
}

void check_cat_of_dcpi(const std::string& file, const DecodedGperf& source) {
  SCOPED_TRACE(file);
  const DecodedDcpi expected = decode_dcpi(read_bytes(file));
  RunResult r = run_tally({"cat", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // Header lines in file order.
  size_t at = 0;
  for (const std::string& line : expected.header_lines) {
    size_t found = r.out.find(line + "\n", at);
    ASSERT_NE(found, std::string::npos) << "header line missing or out of order: " << line;
    at = found + line.size();
  }

  const PrintedDcpi printed = printed_counts(r.out.substr(at));
  EXPECT_EQ(printed.sum, expected.footer_samples);
  EXPECT_EQ(printed.counts.size(), expected.footer_offsets);
  const uint64_t tstart = std::stoull(expected.fields.at("tstart"), nullptr, 16);
  std::map<uint64_t, uint64_t> expected_by_address;
  for (auto [offset, n] : expected.counts) expected_by_address[tstart + offset] = n;
  EXPECT_EQ(printed.counts, expected_by_address);

  // The same image in the gperf source: records whose leaf PC lies in an executable
  // mapping of this path.
  const std::string& image_path = expected.fields.at("path");
  uint64_t leaf_samples = 0;
  std::map<uint64_t, uint64_t> leaf_by_address;
  for (const DecodedRecord& rec : source.records) {
    for (const MapsRange& m : parse_maps(source.maps_text)) {
      if (m.path != image_path || m.perms.find('x') == std::string::npos) continue;
      if (rec.pcs[0] >= m.start && rec.pcs[0] < m.limit) {
        leaf_samples += rec.count;
        leaf_by_address[rec.pcs[0]] += rec.count;
        break;
      }
    }
  }
  EXPECT_GT(leaf_samples, 0u);
  EXPECT_EQ(printed.sum, leaf_samples);
  EXPECT_EQ(printed.counts, leaf_by_address);
}

TEST(CatDcpi, MultiImageProfileGivesOneFilePerImageEachConsistent) {
  TempDir dir;
  const DecodedGperf source = decode_gperf64le(read_bytes(shared("fixtures/gperf/shlib.prof")));
  std::vector<std::string> files = convert_to_dcpi("shlib", dir);
  // shlib's leaves are in the executable and in libtallywork.so.
  ASSERT_EQ(files.size(), 2u);
  uint64_t total = 0;
  for (const std::string& f : files) {
    check_cat_of_dcpi(f, source);
    total += decode_dcpi(read_bytes(f)).footer_samples;
  }
  EXPECT_EQ(total, source.total_samples());  // every shlib leaf is in one of the two
}

TEST(CatDcpi, EverySingleImageFixtureIsConsistent) {
  for (const char* fixture : {"split", "split-nofp", "split-mt", "deep"}) {
    TempDir dir;
    const DecodedGperf source =
        decode_gperf64le(read_bytes(shared(std::string("fixtures/gperf/") + fixture + ".prof")));
    std::vector<std::string> files = convert_to_dcpi(fixture, dir);
    ASSERT_EQ(files.size(), 1u) << fixture;
    check_cat_of_dcpi(files[0], source);
  }
}

TEST(CatDcpi, ReadsFromStandardInput) {
  TempDir dir;
  std::vector<std::string> files = convert_to_dcpi("deep", dir);
  ASSERT_EQ(files.size(), 1u);
  RunResult from_file = run_tally({"cat", files[0]});
  std::string bytes = read_text(files[0]);
  RunResult from_stdin = run_tally({"cat", "-"}, bytes);
  ASSERT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_NE(from_stdin.out.find("<stdin>"), std::string::npos);
  // Identical after the first line, which names the source.
  auto after_first_line = [](const std::string& s) { return s.substr(s.find('\n')); };
  EXPECT_EQ(after_first_line(from_stdin.out), after_first_line(from_file.out));
  EXPECT_EQ(printed_counts(from_stdin.out).sum, decode_dcpi(read_bytes(files[0])).footer_samples);
}

// A hand-made file whose one sample lies past tsize: read, printed, warned about once.
TEST(CatDcpi, PrintsEachWarningOnce) {
  std::string bytes =
      "version pdb-0.07\nimage 01\nepoch 2401020304\nplatform x\nevent cycles\nperiod 1\n"
      "tstart 1000\ntsize 2\ncpuspeed 1\nsamples\n";
  for (uint32_t v : {5u, 1u, 3u, /*footer*/ 1u, 3u})
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>(v >> (8 * i)));
  TempDir dir;
  write_bytes(dir.file("beyond.dcpi"), bytes);
  RunResult r = run_tally({"cat", dir.file("beyond.dcpi")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(printed_counts(r.out).counts, (std::map<uint64_t, uint64_t>{{0x1005, 3}})) << r.out;
  const size_t first = r.err.find("tsize");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("tsize", first + 1), std::string::npos) << "warned twice:\n" << r.err;
}

}  // namespace
}  // namespace tally::test
