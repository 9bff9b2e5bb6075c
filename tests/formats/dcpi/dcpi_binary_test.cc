// The binary section of major version 0: chunks (offset, number, counts) strictly
// increasing and disjoint, then the footer (total_offsets, total_samples) that must agree
// with them. Errors give the byte offset where the file goes wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dcpi_read_helpers.h"

namespace tally::dcpi::test {
namespace {

using testing::HasSubstr;

// The aligned header every file here starts with, and where its binary section begins.
std::string header() {
  std::string head = lines_text(required_lines());  // tsize 4096
  return head + padded_terminator(head.size());
}
const size_t kBinary = header().size();

std::string at_byte(uint64_t offset) { return "t.dcpi: byte " + std::to_string(offset) + ":"; }

TEST(DcpiBinary, ChunksAndCountsAreReadAsWritten) {
  std::vector<RawChunk> chunks = {{0, {1}}, {2, {5, 0, 7}}, {5, {1}}, {4095, {0x80000000u}}};
  auto f = read_string(header() + chunks_bytes(chunks) + true_footer(chunks));
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(f->chunks.size(), 4u);
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(f->chunks[i].offset, chunks[i].offset);
    EXPECT_EQ(f->chunks[i].counts, chunks[i].counts);
  }
  EXPECT_EQ(f->total_offsets(), 5u);  // the 0 in the second chunk is no address with samples
  EXPECT_EQ(f->total_samples(), 1u + 5 + 7 + 1 + 0x80000000u);
}

TEST(DcpiBinary, NoChunksAndAZeroFooterIsAnEmptyProfile) {
  auto f = read_string(header() + le32(0) + le32(0));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_TRUE(f->chunks.empty());
}

TEST(DcpiBinary, AChunkWithZeroCountsIsAnErrorAtItsNumber) {
  std::string body = chunks_bytes({{0, {1}}}) + le32(16) + le32(0);
  std::string message = read_error(header() + body + le32(1) + le32(1));
  EXPECT_THAT(message, HasSubstr(at_byte(kBinary + 12 + 4)));
  EXPECT_THAT(message, HasSubstr("0 counts"));
}

TEST(DcpiBinary, DecreasingOffsetsAreAnErrorAtTheLaterChunk) {
  std::vector<RawChunk> chunks = {{100, {1, 2}}, {50, {3}}};
  std::string message = read_error(header() + chunks_bytes(chunks) + true_footer(chunks));
  EXPECT_THAT(message, HasSubstr(at_byte(kBinary + 16)));
}

TEST(DcpiBinary, AnEqualOffsetIsAnError) {
  std::vector<RawChunk> chunks = {{100, {1}}, {100, {3}}};
  EXPECT_THAT(read_error(header() + chunks_bytes(chunks) + true_footer(chunks)),
              HasSubstr(at_byte(kBinary + 12)));
}

TEST(DcpiBinary, OverlappingChunksAreAnError) {
  // The first chunk covers offsets 100..103; the second starts inside it.
  std::vector<RawChunk> chunks = {{100, {1, 1, 1, 1}}, {103, {3}}};
  std::string message = read_error(header() + chunks_bytes(chunks) + true_footer(chunks));
  EXPECT_THAT(message, HasSubstr(at_byte(kBinary + 24)));
}

TEST(DcpiBinary, AdjacentChunksAreAccepted) {
  std::vector<RawChunk> chunks = {{100, {1, 1, 1, 1}}, {104, {3}}};
  auto f = read_string(header() + chunks_bytes(chunks) + true_footer(chunks));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->chunks.size(), 2u);
}

TEST(DcpiBinary, AChunkRunningIntoTheFooterIsAnError) {
  // The chunk claims 5 counts but only 3 are there before the footer's 8 bytes.
  std::string body = le32(0) + le32(5) + le32(1) + le32(1) + le32(1);
  std::string message = read_error(header() + body + le32(3) + le32(3));
  EXPECT_THAT(message, HasSubstr(at_byte(kBinary + 4)));
  EXPECT_THAT(message, HasSubstr("footer"));
}

TEST(DcpiBinary, AChunkCutInsideItsHeaderIsAnError) {
  // 4 bytes between the last chunk and the footer: an offset without its number.
  std::vector<RawChunk> chunks = {{0, {1}}};
  std::string message =
      read_error(header() + chunks_bytes(chunks) + le32(9) + true_footer(chunks));
  EXPECT_THAT(message, HasSubstr(at_byte(kBinary + 12 + 4)));
}

TEST(DcpiBinary, AWrongTotalOffsetsIsAnErrorAtTheFooter) {
  std::vector<RawChunk> chunks = {{0, {3, 0, 2}}};
  std::string message = read_error(header() + chunks_bytes(chunks) + le32(3) + le32(5));
  size_t footer = kBinary + 20;
  EXPECT_THAT(message, HasSubstr(at_byte(footer)));
}

TEST(DcpiBinary, AWrongTotalSamplesIsAnErrorAtTheFooterSecondWord) {
  std::vector<RawChunk> chunks = {{0, {3, 0, 2}}};
  std::string message = read_error(header() + chunks_bytes(chunks) + le32(2) + le32(6));
  size_t footer = kBinary + 20;
  EXPECT_THAT(message, HasSubstr(at_byte(footer + 4)));
}

TEST(DcpiBinary, ATotalSamplesRightOnlyModulo2To32IsAnError) {
  // Two counts of 2^31 sum to 2^32: a footer of 0 would match a 32-bit wrap-around sum.
  std::vector<RawChunk> chunks = {{0, {0x80000000u, 0x80000000u}}};
  EXPECT_THAT(read_error(header() + chunks_bytes(chunks) + le32(2) + le32(0)),
              HasSubstr(at_byte(kBinary + 16 + 4)));
}

TEST(DcpiBinary, AFileShorterThanTheFooterIsAnError) {
  for (size_t extra = 0; extra < 8; ++extra) {
    std::string message = read_error(header() + std::string(extra, '\0'));
    EXPECT_THAT(message, HasSubstr(at_byte(kBinary))) << extra << " bytes after the header";
    EXPECT_THAT(message, HasSubstr("footer"));
  }
}

TEST(DcpiBinary, EveryTruncationOfAValidFileIsAnError) {
  std::vector<RawChunk> chunks = {{0, {1, 2}}, {9, {4}}};
  std::string whole = header() + chunks_bytes(chunks) + true_footer(chunks);
  ASSERT_TRUE(read_string(whole));
  for (size_t n = 0; n < whole.size(); ++n)
    EXPECT_FALSE(read_string(whole.substr(0, n))) << "cut to " << n << " bytes";
}

TEST(DcpiBinary, SamplesBeyondTsizeAreAWarning) {
  // tsize 4096: offsets 0..4095 are inside the image's text; 4096 is not.
  std::vector<RawChunk> chunks = {{4094, {1, 1, 1}}};
  core::Diagnostics diagnostics;
  auto f = read_string(header() + chunks_bytes(chunks) + true_footer(chunks), diagnostics);
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  EXPECT_THAT(diagnostics.warnings()[0], HasSubstr("tsize"));
  EXPECT_THAT(diagnostics.warnings()[0], HasSubstr("0x1000"));  // the last offset, 4096
}

TEST(DcpiBinary, SamplesUpToTheLastByteOfTsizeGiveNoWarning) {
  std::vector<RawChunk> chunks = {{0, {1}}, {4093, {1, 1, 1}}};
  core::Diagnostics diagnostics;
  auto f = read_string(header() + chunks_bytes(chunks) + true_footer(chunks), diagnostics);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_TRUE(diagnostics.empty()) << diagnostics.warnings()[0];
}

}  // namespace
}  // namespace tally::dcpi::test
