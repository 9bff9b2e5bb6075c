// io::gzip / io::gunzip: round trips, members built by hand and by gzip(1), concatenated
// members, truncated and corrupt input, and the output limit. io::GzipWriter: one member
// per 8 MB block, on one thread or several, read back by gzip(1), zlib and io::gunzip.
#include "io/gzip.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/test_support.h"

namespace tally::io {
namespace {

std::string as_string(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

// Inflates `gz` and requires success.
std::string inflate_ok(std::string_view gz, uint64_t max_output = uint64_t(16) << 30) {
  auto out = gunzip(test::bytes_of(gz), "test.gz", max_output);
  if (!out) {
    ADD_FAILURE() << out.error().message;
    return {};
  }
  return as_string(*out);
}

// Inflates `gz` and requires failure; returns the message.
std::string inflate_error(std::string_view gz, uint64_t max_output = uint64_t(16) << 30) {
  auto out = gunzip(test::bytes_of(gz), "test.gz", max_output);
  if (out) {
    ADD_FAILURE() << "gunzip accepted bad input";
    return {};
  }
  EXPECT_EQ(out.error().message.rfind("test.gz: ", 0), 0u) << "names the source";
  return out.error().message;
}

std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

// --- An independent encoder: one gzip member (RFC 1952) holding stored deflate blocks
// (RFC 1951 3.2.4), with a bitwise CRC-32, so no zlib code decides what we expect. ---

uint32_t crc32_of(std::string_view data) {
  uint32_t crc = 0xffffffffu;
  for (char ch : data) {
    crc ^= static_cast<uint8_t>(ch);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xffffffffu;
}

void put_le(std::string& out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string stored_member(std::string_view data) {
  std::string out = {'\x1f', '\x8b', '\x08', '\0', '\0', '\0', '\0', '\0', '\0', '\xff'};
  size_t pos = 0;
  do {
    size_t n = std::min<size_t>(data.size() - pos, 65535);
    bool last = pos + n == data.size();
    out.push_back(last ? '\x01' : '\x00');  // BFINAL, BTYPE=00 (stored)
    put_le(out, static_cast<uint32_t>(n), 2);
    put_le(out, static_cast<uint32_t>(~n & 0xffff), 2);
    out.append(data.substr(pos, n));
    pos += n;
  } while (pos < data.size());
  put_le(out, crc32_of(data), 4);
  put_le(out, static_cast<uint32_t>(data.size()), 4);
  return out;
}

TEST(Gunzip, DecodesHandBuiltStoredMembers) {
  EXPECT_EQ(inflate_ok(stored_member("")), "");
  EXPECT_EQ(inflate_ok(stored_member("hello, profile\n")), "hello, profile\n");
  std::string big = random_bytes(150000, 1);  // three stored blocks
  EXPECT_EQ(inflate_ok(stored_member(big)), big);
}

TEST(Gunzip, TheHandBuiltEncoderAgreesWithTheCrcCheck) {
  // A wrong CRC in the hand-built member must be caught: this guards the encoder above
  // as much as gunzip.
  std::string gz = stored_member("abc");
  EXPECT_EQ(crc32_of("123456789"), 0xcbf43926u);  // the standard check value
  gz[gz.size() - 8] = static_cast<char>(gz[gz.size() - 8] ^ 1);
  inflate_error(gz);
}

TEST(Gzip, RoundTrips) {
  for (const std::string& data :
       {std::string(), std::string("x"), std::string("line one\nline two\n"),
        std::string(3000000, 'a'), random_bytes(1 << 20, 2)}) {
    std::string gz = gzip(data);
    ASSERT_TRUE(is_gzip(test::bytes_of(gz)));
    EXPECT_EQ(inflate_ok(gz), data) << "size " << data.size();
  }
}

TEST(Gzip, EveryLevelRoundTripsAndHigherLevelsAreNotLarger) {
  std::string data;
  for (int i = 0; i < 20000; ++i) data += "frame " + std::to_string(i % 97) + "\n";
  std::string fast = gzip(data, 1), best = gzip(data, 9), none = gzip(data, 0);
  EXPECT_EQ(inflate_ok(fast), data);
  EXPECT_EQ(inflate_ok(best), data);
  EXPECT_EQ(inflate_ok(none), data);
  EXPECT_LE(best.size(), fast.size());
  EXPECT_GT(none.size(), data.size());  // level 0 stores
  EXPECT_LT(fast.size(), data.size() / 5);
}

TEST(Gzip, InteroperatesWithGzipCommand) {
  std::string tool = test::find_program("gzip");
  TALLY_REQUIRE_PEER(tool, "gzip");
  std::string data = random_bytes(100000, 3) + std::string(100000, 'z');
  test::RunResult ours_by_them = test::run({tool, "-dc"}, gzip(data));
  ASSERT_EQ(ours_by_them.exit_code, 0) << ours_by_them.err;
  EXPECT_EQ(ours_by_them.out, data);
  test::RunResult theirs = test::run({tool, "-c", "-n"}, data);
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  EXPECT_EQ(inflate_ok(theirs.out), data);
}

TEST(IsGzip, LooksAtTheTwoMagicBytes) {
  EXPECT_TRUE(is_gzip(test::bytes_of("\x1f\x8b")));
  EXPECT_TRUE(is_gzip(test::bytes_of(gzip("x"))));
  EXPECT_FALSE(is_gzip(test::bytes_of("\x1f")));
  EXPECT_FALSE(is_gzip(test::bytes_of("")));
  EXPECT_FALSE(is_gzip(test::bytes_of("\x8b\x1f")));
  EXPECT_FALSE(is_gzip(test::bytes_of("%!PS")));
}

TEST(Gunzip, ConcatenatedMembersFormOneStream) {
  EXPECT_EQ(inflate_ok(gzip("hello ") + gzip("world")), "hello world");
  EXPECT_EQ(inflate_ok(gzip("a") + gzip("") + stored_member("b") + gzip("c")), "abc");
}

TEST(Gunzip, TrailingZeroPaddingIsIgnored) {
  EXPECT_EQ(inflate_ok(gzip("data") + std::string(512, '\0')), "data");
}

TEST(Gunzip, GarbageAfterAMemberIsAnError) {
  inflate_error(gzip("data") + "trailing garbage");
}

TEST(Gunzip, EveryTruncationIsReportedAsTruncated) {
  // Cutting anywhere (header, deflate data, trailer) leaves a stream that ends early.
  std::string gz = gzip("some text that compresses: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  for (size_t cut = 0; cut < gz.size(); ++cut) {
    std::string message = inflate_error(std::string_view(gz).substr(0, cut));
    EXPECT_NE(message.find("truncated"), std::string::npos) << "cut at " << cut << ": " << message;
  }
}

TEST(Gunzip, TruncatedSecondMemberIsReportedAsTruncated) {
  std::string second = gzip("second member");
  std::string message = inflate_error(gzip("first") + second.substr(0, second.size() - 3));
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST(Gunzip, CorruptDataIsAnErrorNotTruncation) {
  std::string data = random_bytes(4000, 4) + std::string(4000, 'q');
  std::string gz = gzip(data);
  struct Damage {
    const char* what;
    size_t at;
  };
  for (Damage d : {Damage{"magic", 0}, Damage{"method", 2}, Damage{"crc", gz.size() - 6},
                   Damage{"length", gz.size() - 2}}) {
    std::string bad = gz;
    bad[d.at] = static_cast<char>(bad[d.at] ^ 0x55);
    std::string message = inflate_error(bad);
    EXPECT_EQ(message.find("truncated"), std::string::npos) << d.what << ": " << message;
  }
}

TEST(Gunzip, DamagedDeflateDataNeverPassesSilently) {
  // Flipping bytes inside the compressed data either breaks the deflate stream or the
  // CRC; it must never yield different output without an error.
  std::string data = random_bytes(2000, 5) + std::string(20000, 'r');
  std::string gz = gzip(data);
  for (size_t at = 10; at + 8 < gz.size(); at += 7) {
    std::string bad = gz;
    bad[at] = static_cast<char>(bad[at] ^ 0xff);
    auto out = gunzip(test::bytes_of(bad), "bad.gz");
    EXPECT_FALSE(out.has_value() && as_string(*out) != data) << "flip at " << at;
  }
}

TEST(Gunzip, NotGzipAtAllIsAnError) {
  inflate_error("this is plain text, not gzip");
}

TEST(Gunzip, OutputLimitIsInclusive) {
  std::string data(100000, 'x');
  std::string gz = gzip(data);
  EXPECT_EQ(inflate_ok(gz, 100000).size(), 100000u);
  std::string message = inflate_error(gz, 99999);
  EXPECT_NE(message.find("99999"), std::string::npos) << message;
}

TEST(Gunzip, OutputLimitCountsAllMembers) {
  std::string gz = gzip(std::string(60000, 'a')) + gzip(std::string(60000, 'b'));
  EXPECT_EQ(inflate_ok(gz, 120000).size(), 120000u);
  inflate_error(gz, 100000);
}

TEST(Gunzip, OutputLimitStopsADecompressionBomb) {
  // 64 MB of zeros compress to about 64 KB; a 1 MB limit must stop it early.
  std::string bomb = gzip(std::string(size_t(64) << 20, '\0'), 9);
  ASSERT_LT(bomb.size(), size_t(1) << 20);
  std::string message = inflate_error(bomb, 1 << 20);
  EXPECT_NE(message.find("exceeds"), std::string::npos) << message;
}

// --- GzipWriter ---

constexpr size_t kBlock = size_t(8) << 20;  // gzip.h: "cut into 8 MB blocks"

// Text that compresses as a profile does: lines of a few hundred distinct words.
std::string profile_like_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  s.reserve(n + 64);
  while (s.size() < n) s += "frame_" + std::to_string(rng() % 300) + (rng() % 4 ? " " : "\n");
  s.resize(n);
  return s;
}

// The uncompressed size of each member of `gz`, by zlib directly: inflate to the end of a
// member, then inflateReset for the next.
std::vector<size_t> member_sizes(std::string_view gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::vector<size_t> sizes;
  size_t current = 0;
  std::vector<char> buf(1 << 16);
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf.data());
    z.avail_out = static_cast<uInt>(buf.size());
    int rc = inflate(&z, Z_NO_FLUSH);
    current += buf.size() - z.avail_out;
    if (rc == Z_STREAM_END) {
      sizes.push_back(current);
      current = 0;
      if (z.avail_in == 0) break;
      inflateReset(&z);
    } else if (rc != Z_OK) {
      ADD_FAILURE() << "zlib: " << (z.msg ? z.msg : "error") << " after " << sizes.size() << " members";
      break;
    }
  }
  inflateEnd(&z);
  return sizes;
}

// What gzip.h promises for n bytes: full blocks, then the rest; one (empty) member for 0.
std::vector<size_t> expected_member_sizes(size_t n) {
  std::vector<size_t> sizes(n / kBlock, kBlock);
  if (n % kBlock != 0 || n == 0) sizes.push_back(n % kBlock);
  return sizes;
}

// GzipWriter output for `data`, handed over in pieces of uneven sizes.
std::string write_in_pieces(std::string_view data, unsigned threads) {
  GzipWriter writer(6, threads);
  size_t piece = 1;
  while (!data.empty()) {
    size_t n = std::min(piece, data.size());
    writer.write(data.substr(0, n));
    data.remove_prefix(n);
    piece = piece * 7 + 13;  // 1, 20, 153, ... past a block within a few writes
  }
  return writer.finish();
}

struct WriterCase {
  size_t size;
  unsigned threads;
};

class GzipWriterSizes : public ::testing::TestWithParam<WriterCase> {};

TEST_P(GzipWriterSizes, OneMemberPerBlockThatEveryReaderInflates) {
  const auto [size, threads] = GetParam();
  const std::string data = profile_like_bytes(size, size + 1);
  GzipWriter writer(6, threads);
  writer.write(data);
  const std::string gz = writer.finish();
  ASSERT_TRUE(is_gzip(test::bytes_of(gz)));
  EXPECT_LT(gz.size(), size / 2 + 100) << "compressed";

  const std::vector<size_t> sizes = member_sizes(gz);
  EXPECT_EQ(sizes, expected_member_sizes(size));
  if (size > kBlock) {
    EXPECT_GT(sizes.size(), 1u) << "several members";
  }

  EXPECT_EQ(inflate_ok(gz) == data, true) << "io::gunzip";
  std::string tool = test::find_program("gzip");
  TALLY_REQUIRE_PEER(tool, "gzip");
  test::RunResult r = test::run({tool, "-dc"}, gz);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.size(), data.size());
  EXPECT_EQ(r.out == data, true) << "gzip -dc";
}

TEST_P(GzipWriterSizes, TheBytesDependOnNeitherThreadsNorPieces) {
  // Each block is compressed alone, so the output is the same however it was made.
  const auto [size, threads] = GetParam();
  const std::string data = profile_like_bytes(size, size + 2);
  GzipWriter one_thread(6, 1);
  one_thread.write(data);
  const std::string expected = one_thread.finish();
  EXPECT_EQ(write_in_pieces(data, threads) == expected, true);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GzipWriterSizes,
    ::testing::Values(WriterCase{0, 1}, WriterCase{0, 3}, WriterCase{(1 << 20) + 3, 1},
                      WriterCase{(1 << 20) + 3, 3}, WriterCase{kBlock, 1}, WriterCase{kBlock, 3},
                      WriterCase{20 << 20, 1}, WriterCase{20 << 20, 3}),
    [](const auto& p) {
      return "bytes" + std::to_string(p.param.size) + "_threads" + std::to_string(p.param.threads);
    });

TEST(GzipWriter, AMemberIsAStandaloneGzipFile) {
  // Every member starts with the magic bytes: the second starts where the first one's
  // compressed bytes end, which a reader finds without help.
  const std::string data = profile_like_bytes(kBlock + 1000, 9);
  GzipWriter writer(6, 2);
  writer.write(data);
  const std::string gz = writer.finish();
  const std::string first_alone = gzip(std::string_view(data).substr(0, kBlock));
  ASSERT_GT(gz.size(), first_alone.size());
  EXPECT_EQ(gz.substr(0, first_alone.size()) == first_alone, true);
  EXPECT_TRUE(is_gzip(test::bytes_of(std::string_view(gz).substr(first_alone.size()))));
  EXPECT_EQ(inflate_ok(std::string_view(gz).substr(first_alone.size())), data.substr(kBlock));
}

TEST(GzipWriter, TheLevelIsUsed) {
  const std::string data = profile_like_bytes(1 << 20, 10);
  GzipWriter stored(0, 2), best(9, 2);
  stored.write(data);
  best.write(data);
  const std::string s = stored.finish(), b = best.finish();
  EXPECT_GT(s.size(), data.size()) << "level 0 stores";
  EXPECT_LT(b.size(), data.size() / 3);
  EXPECT_EQ(inflate_ok(s), data);
  EXPECT_EQ(inflate_ok(b), data);
}

TEST(GzipWriter, AllCoresIsAtLeastOne) { EXPECT_GE(GzipWriter::all_cores(), 1u); }

}  // namespace
}  // namespace tally::io
