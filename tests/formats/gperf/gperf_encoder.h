// A tiny gperftools CPU profile encoder written from the spec, independent of tally's
// writer, so that reader tests do not check tally against itself. Words are laid out byte
// by byte (no memcpy of host integers) in any width and byte order.
#pragma once

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tally::test {

class GperfEncoder {
 public:
  GperfEncoder(unsigned word_bytes, std::endian order) : word_bytes_(word_bytes), order_(order) {}

  GperfEncoder& word(uint64_t value) {
    for (unsigned i = 0; i < word_bytes_; ++i) {
      unsigned shift = 8 * (order_ == std::endian::little ? i : word_bytes_ - 1 - i);
      bytes_.push_back(static_cast<char>((value >> shift) & 0xff));
    }
    return *this;
  }
  GperfEncoder& words(std::initializer_list<uint64_t> values) {
    for (uint64_t v : values) word(v);
    return *this;
  }
  // The header as gperftools writes it: 0, slots after, 0, period, then `extra` slots.
  GperfEncoder& header(uint64_t period_us, const std::vector<uint64_t>& extra = {0}) {
    words({0, 2 + extra.size(), 0, period_us});
    for (uint64_t e : extra) word(e);
    return *this;
  }
  GperfEncoder& record(uint64_t count, const std::vector<uint64_t>& pcs) {
    words({count, pcs.size()});
    for (uint64_t pc : pcs) word(pc);
    return *this;
  }
  GperfEncoder& trailer() { return words({0, 1, 0}); }
  GperfEncoder& text(const std::string& s) {
    bytes_ += s;
    return *this;
  }
  size_t size() const { return bytes_.size(); }
  const std::string& bytes() const { return bytes_; }

 private:
  unsigned word_bytes_;
  std::endian order_;
  std::string bytes_;
};

inline std::vector<uint8_t> as_bytes(const std::string& s) { return {s.begin(), s.end()}; }

// One record of a profile written with encode_records: a count and its stack.
struct GperfRecord {
  uint64_t count;
  std::vector<uint64_t> pcs;
};

// A 64-bit little-endian file, period 1000 us: the records, the trailer, then `maps`.
inline std::string encode_records(const std::vector<GperfRecord>& records, const std::string& maps) {
  GperfEncoder e(8, std::endian::little);
  e.header(1000);
  for (const GperfRecord& r : records) e.record(r.count, r.pcs);
  return e.trailer().text(maps).bytes();
}

}  // namespace tally::test
