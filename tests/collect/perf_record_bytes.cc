#include "perf_record_bytes.h"

#include <cstring>

namespace tally::test {

RecordBytes& RecordBytes::u32(uint32_t v) { return bytes(&v, 4); }
RecordBytes& RecordBytes::u64(uint64_t v) { return bytes(&v, 8); }

RecordBytes& RecordBytes::bytes(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  body_.insert(body_.end(), p, p + n);
  return *this;
}

RecordBytes& RecordBytes::name(const std::string& s) {
  bytes(s.data(), s.size());
  body_.push_back(0);
  while (body_.size() % 8) body_.push_back(0);
  return *this;
}

std::vector<uint64_t> RecordBytes::words(int size_field) const {
  std::vector<uint8_t> all(8 + body_.size());
  perf_event_header h{type_, misc_,
                      static_cast<uint16_t>(size_field >= 0 ? size_field : int(all.size()))};
  std::memcpy(all.data(), &h, sizeof h);
  std::memcpy(all.data() + 8, body_.data(), body_.size());
  while (all.size() % 8) all.push_back(0);
  std::vector<uint64_t> out(all.size() / 8);
  std::memcpy(out.data(), all.data(), all.size());
  return out;
}

}  // namespace tally::test
