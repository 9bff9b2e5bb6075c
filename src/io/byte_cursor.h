// ByteCursor: bounds-checked reading of a binary input. Every read that would pass the
// end throws core::FormatError with the byte offset and what was being read, so parsers
// never index past their input and never need to check lengths by hand.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "core/error.h"

namespace tally::io {

class ByteCursor {
 public:
  explicit ByteCursor(std::span<const uint8_t> bytes, uint64_t base_offset = 0)
      : bytes_(bytes), base_(base_offset) {}

  uint64_t offset() const { return base_ + pos_; }  // position in the whole input
  size_t position() const { return pos_; }          // position in this span
  size_t remaining() const { return bytes_.size() - pos_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  std::span<const uint8_t> rest() const { return bytes_.subspan(pos_); }

  void require(size_t n, const char* what) const {
    if (n > remaining())
      core::fail_at_byte(offset(), std::string("expected ") + std::to_string(n) +
                                       " bytes of " + what + ", but only " +
                                       std::to_string(remaining()) + " remain");
  }
  void skip(size_t n, const char* what) {
    require(n, what);
    pos_ += n;
  }
  std::span<const uint8_t> take(size_t n, const char* what) {
    require(n, what);
    auto out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  uint32_t u32(std::endian order, const char* what) { return static_cast<uint32_t>(word(4, order, what)); }
  uint64_t u64(std::endian order, const char* what) { return word(8, order, what); }

  // A 4- or 8-byte unsigned word in the given byte order.
  uint64_t word(unsigned size, std::endian order, const char* what) {
    require(size, what);
    uint64_t v = decode(bytes_.data() + pos_, size, order);
    pos_ += size;
    return v;
  }

  static uint64_t decode(const uint8_t* p, unsigned size, std::endian order) {
    uint64_t v = 0;
    if (order == std::endian::little) {
      for (unsigned i = size; i-- > 0;) v = v << 8 | p[i];
    } else {
      for (unsigned i = 0; i < size; ++i) v = v << 8 | p[i];
    }
    return v;
  }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t base_;
  size_t pos_ = 0;
};

}  // namespace tally::io
