// Protobuf wire format, read side: tags, varints, length-delimited fields. Used on bytes
// that check_wire() already accepted, so a failure here is a bug or a race, reported as a
// FormatError rather than trusted.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/error.h"

namespace tally::pprof {

enum WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

class WireReader {
 public:
  WireReader(std::span<const uint8_t> bytes, uint64_t base) : bytes_(bytes), base_(base) {}
  bool at_end() const { return pos_ >= bytes_.size(); }
  uint64_t offset() const { return base_ + pos_; }

  // The next field's number and wire type.
  void tag(uint64_t& field, uint8_t& wire) {
    uint64_t t = varint();
    field = t >> 3;
    wire = static_cast<uint8_t>(t & 7);
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) core::fail_at_byte(offset(), "truncated varint");
      uint8_t b = bytes_[pos_++];
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    core::fail_at_byte(offset(), "overlong varint");
  }
  // A length-delimited field's content, and the offset it starts at.
  std::span<const uint8_t> bytes(uint64_t& start) {
    uint64_t n = varint();
    if (n > bytes_.size() - pos_) core::fail_at_byte(offset(), "truncated field");
    start = offset();
    auto out = bytes_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }
  // The number of varints in the rest of the input (a packed array): the bytes without
  // the continuation bit.
  size_t varint_count() const {
    size_t n = 0;
    for (size_t i = pos_; i < bytes_.size(); ++i) n += (bytes_[i] & 0x80) == 0;
    return n;
  }
  // For messages of scalar fields only: calls on_field(field, value) for each varint field
  // to the end, skipping fields of other wire types (unknown or newer ones).
  template <typename F>
  void for_each_varint_field(F&& on_field) {
    while (!at_end()) {
      uint64_t field;
      uint8_t wire;
      tag(field, wire);
      if (wire != kVarint) {
        skip(wire);
        continue;
      }
      on_field(field, varint());
    }
  }
  // A reader over the next length-delimited field (a sub-message or a packed array).
  WireReader sub() {
    uint64_t start;
    auto content = bytes(start);
    return WireReader(content, start);
  }
  void skip(uint8_t wire) {
    uint64_t ignored;
    switch (wire) {
      case kVarint: varint(); return;
      case kFixed64: advance(8); return;
      case kFixed32: advance(4); return;
      case kLen: bytes(ignored); return;
      default: core::fail_at_byte(offset(), "invalid wire type");
    }
  }
  // A repeated varint field, packed (kLen) or one element (kVarint): calls f per value.
  template <class F>
  void repeated_varint(uint8_t wire, F&& f) {
    if (wire == kVarint) {
      f(varint());
      return;
    }
    WireReader inner = sub();
    while (!inner.at_end()) f(inner.varint());
  }

 private:
  void advance(size_t n) {
    if (n > bytes_.size() - pos_) core::fail_at_byte(offset(), "truncated fixed-width field");
    pos_ += n;
  }
  std::span<const uint8_t> bytes_;
  uint64_t base_;
  size_t pos_ = 0;
};

}  // namespace tally::pprof
