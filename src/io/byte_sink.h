// ByteSink: an append-only output buffer with fixed-width integer encoding, used by the
// binary writers. Writers build the whole file in memory and hand it to an OutputFile.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

namespace tally::io {

class ByteSink {
 public:
  void word(uint64_t v, unsigned size, std::endian order) {
    char buf[8];
    for (unsigned i = 0; i < size; ++i) {
      unsigned shift = order == std::endian::little ? 8 * i : 8 * (size - 1 - i);
      buf[i] = static_cast<char>((v >> shift) & 0xff);
    }
    data_.append(buf, size);
  }
  void u32le(uint32_t v) { word(v, 4, std::endian::little); }
  void u64le(uint64_t v) { word(v, 8, std::endian::little); }
  void text(std::string_view s) { data_.append(s); }
  void reserve(size_t n) { data_.reserve(n); }
  size_t size() const { return data_.size(); }
  const std::string& data() const { return data_; }
  std::string take() { return std::move(data_); }

 private:
  std::string data_;
};

}  // namespace tally::io
