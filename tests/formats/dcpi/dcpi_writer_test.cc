// The writer: header lines, the terminator padded to a 4-byte boundary, chunks and footer
// in little-endian; read -> write gives the same bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dcpi_read_helpers.h"

namespace tally::dcpi::test {
namespace {

DcpiFile file_from(const std::vector<std::string>& lines, const std::vector<RawChunk>& chunks) {
  DcpiFile f;
  for (const std::string& l : lines) {
    size_t space = l.find(' ');
    f.header.push_back({l.substr(0, space), l.substr(space + 1)});
  }
  for (const RawChunk& c : chunks) f.chunks.push_back({c.offset, c.counts});
  return f;
}

// The binary section starts after the first line that is exactly "samples" + blanks.
size_t binary_start(const std::string& bytes) {
  size_t pos = 0;
  while (true) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) return std::string::npos;
    std::string_view line(bytes.data() + pos, end - pos);
    if (line.starts_with("samples") && line.substr(7).find_first_not_of(' ') == std::string::npos)
      return end + 1;
    pos = end + 1;
  }
}

TEST(DcpiWriter, TheHeaderLengthIsAMultipleOfFourForEveryLength) {
  std::vector<RawChunk> chunks = {{16, {4, 5}}};
  for (size_t extra = 0; extra < 8; ++extra) {
    std::vector<std::string> lines = required_lines();
    lines.push_back("note " + std::string(extra + 1, 'x'));
    auto written = write_dcpi(file_from(lines, chunks));
    ASSERT_TRUE(written) << written.error().message;
    size_t start = binary_start(*written);
    ASSERT_NE(start, std::string::npos);
    EXPECT_EQ(start % 4, 0u) << "with a note of " << extra + 1 << " letters";
    // At most three padding spaces: never a whole wasted word.
    EXPECT_LE(start - lines_text(lines).size(), std::string("samples   \n").size());
    EXPECT_EQ(*written, canonical_file(lines, chunks));
  }
}

TEST(DcpiWriter, WritesTheFooterFromTheChunks) {
  std::vector<RawChunk> chunks = {{0, {1, 0, 0, 9}}, {100, {0xfffffff0u}}};
  auto written = write_dcpi(file_from(required_lines(), chunks));
  ASSERT_TRUE(written) << written.error().message;
  // offsets with samples: 3; total: 1 + 9 + 0xfffffff0 = 0xfffffffa.
  EXPECT_EQ(written->substr(written->size() - 8), le32(3) + le32(0xfffffffau));
}

TEST(DcpiWriter, RefusesATotalThatDoesNotFitTheFooter) {
  std::vector<RawChunk> chunks = {{0, {0xffffffffu}}, {1, {1}}};
  auto written = write_dcpi(file_from(required_lines(), chunks));
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().kind, core::ErrorKind::unsupported);
}

TEST(DcpiWriter, AHandBuiltCanonicalFileRoundTripsByteForByte) {
  std::vector<std::string> lines = {
      "version pdb-0.06",      "image DEADbeef",     "path /usr/shlib/libc.so",
      "epoch 20240229123059",  "platform alpha\tev5", "foo bar baz ",
      "event dmiss",           "period 4096",        "tstart 3ff80000000",
      "tsize 1048576",         "cpuspeed 600",       "cpuamask 0f",
      "samples extra",         "cpuimplv 1",         "cpucount 2"};
  std::vector<RawChunk> chunks = {{0, {1}}, {4, {2, 0, 3}}, {1048572, {0xffff}}};
  const std::string original = canonical_file(lines, chunks);
  auto f = read_string(original);
  ASSERT_TRUE(f) << f.error().message;
  auto written = write_dcpi(*f);
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(*written, original);
}

TEST(DcpiWriter, ReadThenWriteOfAWrittenFileIsByteIdentical) {
  // A non-canonical file (tabs, runs of blanks, no padding): its first rewrite normalizes
  // it; the rewrite of that is identical.
  std::string head =
      "version\tpdb-0.07\nimage   ab\nepoch 9907011230\nplatform  x y\nevent cycles\n"
      "period 1\nunknown-word\t\tkept\ntstart 0\ntsize 64\ncpuspeed 1\n";
  std::vector<RawChunk> chunks = {{2, {1, 2, 3}}, {40, {9}}};
  std::string original = head + "samples \t\n" + chunks_bytes(chunks) + true_footer(chunks);
  auto first = read_string(original);
  ASSERT_TRUE(first) << first.error().message;
  auto once = write_dcpi(*first);
  ASSERT_TRUE(once) << once.error().message;
  auto second = read_string(*once);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->header, first->header);
  EXPECT_EQ(second->chunks, first->chunks);
  auto twice = write_dcpi(*second);
  ASSERT_TRUE(twice) << twice.error().message;
  EXPECT_EQ(*twice, *once);
  // What the normalized file must be, from the encoder.
  EXPECT_EQ(*once, canonical_file({"version pdb-0.07", "image ab", "epoch 9907011230",
                                   "platform x y", "event cycles", "period 1",
                                   "unknown-word kept", "tstart 0", "tsize 64", "cpuspeed 1"},
                                  chunks));
}

TEST(DcpiWriter, AnEmptyHistogramIsHeaderAndZeroFooter) {
  auto written = write_dcpi(file_from(required_lines(), {}));
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(*written, canonical_file(required_lines(), {}));
  EXPECT_EQ(written->substr(written->size() - 8), std::string(8, '\0'));
}

}  // namespace
}  // namespace tally::dcpi::test
