// io::ByteCursor: fixed-width words in either byte order, and a FormatError naming the
// offset and the field for every read that would pass the end.
#include "io/byte_cursor.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"

namespace tally::io {
namespace {

constexpr auto kLittle = std::endian::little;
constexpr auto kBig = std::endian::big;

const std::vector<uint8_t> kCounting = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                        0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10};

// Runs `read`, which must throw core::FormatError, and returns the error.
core::FormatError error_from(const std::function<void()>& read) {
  try {
    read();
  } catch (const core::FormatError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a FormatError";
  return core::FormatError(core::PositionKind::line, 0, "no error");
}

TEST(ByteCursor, ReadsFourByteWordsInEitherOrder) {
  ByteCursor c(kCounting);
  EXPECT_EQ(c.u32(kLittle, "a"), 0x04030201u);
  EXPECT_EQ(c.u32(kBig, "b"), 0x05060708u);
  EXPECT_EQ(c.word(4, kLittle, "c"), 0x0c0b0a09u);
  EXPECT_EQ(c.word(4, kBig, "d"), 0x0d0e0f10u);
  EXPECT_TRUE(c.at_end());
  EXPECT_EQ(c.offset(), 16u);
}

TEST(ByteCursor, ReadsEightByteWordsInEitherOrder) {
  ByteCursor c(kCounting);
  EXPECT_EQ(c.u64(kLittle, "a"), 0x0807060504030201u);
  EXPECT_EQ(c.u64(kBig, "b"), 0x090a0b0c0d0e0f10u);
  EXPECT_TRUE(c.at_end());
  ByteCursor again(kCounting);
  EXPECT_EQ(again.word(8, kBig, "c"), 0x0102030405060708u);
  EXPECT_EQ(again.word(8, kLittle, "d"), 0x100f0e0d0c0b0a09u);
}

TEST(ByteCursor, WordsWithTheHighBitSetAreUnsigned) {
  const std::vector<uint8_t> ones(8, 0xff);
  ByteCursor c(ones);
  EXPECT_EQ(c.u32(kLittle, "a"), 0xffffffffu);
  EXPECT_EQ(c.u32(kBig, "b"), 0xffffffffu);
  ByteCursor d(ones);
  EXPECT_EQ(d.u64(kBig, "c"), std::numeric_limits<uint64_t>::max());
  const std::vector<uint8_t> top = {0x80, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(ByteCursor(top).u64(kBig, "d"), 0x8000000000000000u);
  EXPECT_EQ(ByteCursor(top).u64(kLittle, "e"), 0x80u);
}

TEST(ByteCursor, DecodeMatchesTheReads) {
  EXPECT_EQ(ByteCursor::decode(kCounting.data() + 2, 4, kLittle), 0x06050403u);
  EXPECT_EQ(ByteCursor::decode(kCounting.data() + 2, 4, kBig), 0x03040506u);
  EXPECT_EQ(ByteCursor::decode(kCounting.data(), 8, kBig), 0x0102030405060708u);
}

TEST(ByteCursor, TakeSkipAndRestTrackThePosition) {
  ByteCursor c(kCounting, 1000);
  EXPECT_EQ(c.offset(), 1000u);
  auto first = c.take(3, "magic");
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0], 0x01);
  EXPECT_EQ(first[2], 0x03);
  c.skip(2, "padding");
  EXPECT_EQ(c.position(), 5u);
  EXPECT_EQ(c.offset(), 1005u);
  EXPECT_EQ(c.remaining(), 11u);
  ASSERT_EQ(c.rest().size(), 11u);
  EXPECT_EQ(c.rest()[0], 0x06);
  EXPECT_EQ(c.u32(kBig, "x"), 0x06070809u);
  EXPECT_EQ(c.offset(), 1009u);
  EXPECT_FALSE(c.at_end());
}

TEST(ByteCursor, ZeroLengthReadsAtTheEndSucceed) {
  ByteCursor c(kCounting);
  c.skip(16, "everything");
  EXPECT_TRUE(c.at_end());
  EXPECT_TRUE(c.take(0, "nothing").empty());
  c.skip(0, "nothing");
  c.require(0, "nothing");
  EXPECT_EQ(c.offset(), 16u);
}

TEST(ByteCursor, EveryReadPastTheEndThrowsAtTheCurrentOffset) {
  // 16 bytes starting at file offset 100; 13 consumed, so 3 remain at offset 113.
  struct Case {
    const char* name;
    std::function<void(ByteCursor&)> read;
    const char* wanted;  // "expected N bytes"
  };
  const std::vector<Case> cases = {
      {"u32 little", [](ByteCursor& c) { c.u32(kLittle, "sample count"); }, "expected 4 bytes"},
      {"u32 big", [](ByteCursor& c) { c.u32(kBig, "sample count"); }, "expected 4 bytes"},
      {"u64 little", [](ByteCursor& c) { c.u64(kLittle, "sample count"); }, "expected 8 bytes"},
      {"u64 big", [](ByteCursor& c) { c.u64(kBig, "sample count"); }, "expected 8 bytes"},
      {"word 4", [](ByteCursor& c) { c.word(4, kBig, "sample count"); }, "expected 4 bytes"},
      {"word 8", [](ByteCursor& c) { c.word(8, kLittle, "sample count"); }, "expected 8 bytes"},
      {"take", [](ByteCursor& c) { c.take(5, "sample count"); }, "expected 5 bytes"},
      {"skip", [](ByteCursor& c) { c.skip(4, "sample count"); }, "expected 4 bytes"},
      {"require", [](ByteCursor& c) { c.require(9, "sample count"); }, "expected 9 bytes"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    ByteCursor c(kCounting, 100);
    c.skip(13, "head");
    core::FormatError e = error_from([&] { k.read(c); });
    EXPECT_EQ(e.kind(), core::PositionKind::byte);
    EXPECT_EQ(e.position(), 113u);
    std::string what = e.what();
    EXPECT_NE(what.find("sample count"), std::string::npos) << what;
    EXPECT_NE(what.find(k.wanted), std::string::npos) << what;
    EXPECT_NE(what.find("only 3 remain"), std::string::npos) << what;
    EXPECT_EQ(c.offset(), 113u) << "a failed read must not move the cursor";
  }
}

TEST(ByteCursor, EmptyInputFailsAtItsBaseOffset) {
  ByteCursor c(std::span<const uint8_t>{}, 42);
  EXPECT_TRUE(c.at_end());
  EXPECT_EQ(c.remaining(), 0u);
  core::FormatError e = error_from([&] { c.u64(kLittle, "header"); });
  EXPECT_EQ(e.position(), 42u);
  EXPECT_NE(std::string(e.what()).find("header"), std::string::npos);
}

TEST(ByteCursor, HugeLengthsAreRefusedNotWrapped) {
  ByteCursor c(kCounting);
  c.skip(1, "x");
  EXPECT_THROW(c.skip(std::numeric_limits<size_t>::max(), "slots"), core::FormatError);
  EXPECT_THROW(c.take(std::numeric_limits<size_t>::max() - 1, "slots"), core::FormatError);
  EXPECT_EQ(c.position(), 1u);
}

TEST(ByteCursor, LocatedErrorNamesSourceByteAndField) {
  ByteCursor c(kCounting, 8);
  c.skip(15, "head");
  core::FormatError e = error_from([&] { c.u32(kLittle, "stack depth"); });
  core::Error located = e.located("cpu.prof");
  EXPECT_EQ(located.kind, core::ErrorKind::invalid_input);
  EXPECT_EQ(located.message.rfind("cpu.prof: byte 23: ", 0), 0u) << located.message;
  EXPECT_NE(located.message.find("stack depth"), std::string::npos) << located.message;
}

}  // namespace
}  // namespace tally::io
