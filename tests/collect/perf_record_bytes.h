// The tests' own encoder of perf ring records (kernel ABI layouts written field by field
// from <linux/perf_event.h>), so that the decoder's inputs never come from tally's code.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tally::test {

class RecordBytes {
 public:
  RecordBytes(uint32_t type, uint16_t misc) : type_(type), misc_(misc) {}
  RecordBytes& u32(uint32_t v);
  RecordBytes& u64(uint64_t v);
  RecordBytes& bytes(const void* data, size_t n);
  // A NUL-terminated string padded with zeros to a multiple of 8.
  RecordBytes& name(const std::string& s);
  // The record as 8-byte-aligned words; size = 8 + the body, unless `size_field` overrides
  // what the header says.
  std::vector<uint64_t> words(int size_field = -1) const;

 private:
  uint32_t type_;
  uint16_t misc_;
  std::vector<uint8_t> body_;
};

inline std::span<const uint8_t> as_bytes(const std::vector<uint64_t>& words) {
  return {reinterpret_cast<const uint8_t*>(words.data()), words.size() * 8};
}

}  // namespace tally::test
