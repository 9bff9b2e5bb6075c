// Protobuf wire format, write side, emitting exactly what libprotobuf's deterministic
// serializer emits for a proto3 message: fields in number order, zero scalars omitted,
// repeated scalars packed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tally::pprof {

class WireWriter {
 public:
  explicit WireWriter(std::string& out) : out_(out) {}

  static size_t varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
      v >>= 7;
      ++n;
    }
    return n;
  }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void tag(uint32_t field, uint8_t wire) { varint(uint64_t(field) << 3 | wire); }

  // A singular varint field, omitted when zero (proto3).
  void scalar(uint32_t field, uint64_t v) {
    if (v == 0) return;
    tag(field, 0);
    varint(v);
  }
  void scalar(uint32_t field, int64_t v) { scalar(field, static_cast<uint64_t>(v)); }
  void boolean(uint32_t field, bool v) { scalar(field, uint64_t(v ? 1 : 0)); }
  // A length-delimited field (string, bytes or an encoded sub-message); always written.
  void bytes(uint32_t field, std::string_view content) {
    tag(field, 2);
    varint(content.size());
    out_.append(content);
  }
  // A packed repeated varint field, omitted when empty.
  template <class T>
  void packed(uint32_t field, std::span<const T> values) {
    if (values.empty()) return;
    size_t n = 0;
    for (T v : values) n += varint_size(static_cast<uint64_t>(v));
    tag(field, 2);
    varint(n);
    for (T v : values) varint(static_cast<uint64_t>(v));
  }

 private:
  std::string& out_;
};

}  // namespace tally::pprof
