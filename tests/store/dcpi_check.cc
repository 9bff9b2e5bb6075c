#include "dcpi_check.h"

#include <vector>

namespace tally::store::test {

namespace {

uint32_t le32(const std::string& b, size_t at) {
  return uint32_t(uint8_t(b[at])) | uint32_t(uint8_t(b[at + 1])) << 8 |
         uint32_t(uint8_t(b[at + 2])) << 16 | uint32_t(uint8_t(b[at + 3])) << 24;
}

}  // namespace

CheckedDcpi check_dcpi(const std::string& bytes) {
  CheckedDcpi out;
  size_t pos = 0;
  while (true) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) {
      out.error = "no 'samples' line";
      return out;
    }
    std::string line = bytes.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("samples", 0) == 0 && line.find_first_not_of(' ', 7) == std::string::npos) break;
    size_t space = line.find(' ');
    if (space == std::string::npos || space == 0) {
      out.error = "bad header line '" + line + "'";
      return out;
    }
    out.header[line.substr(0, space)] = line.substr(line.find_first_not_of(" \t", space));
  }
  for (const char* key : {"version", "image", "epoch", "platform", "event", "period", "tstart",
                          "tsize", "cpuspeed"})
    if (!out.header.count(key)) {
      out.error = std::string("no '") + key + "' line";
      return out;
    }
  if (pos % 4 != 0) {
    out.error = "binary part not 4-byte aligned";
    return out;
  }
  if (bytes.size() < pos + 8 || (bytes.size() - pos) % 4 != 0) {
    out.error = "binary part of a bad size";
    return out;
  }
  const size_t footer = bytes.size() - 8;
  uint64_t offsets = 0, next = 0;
  bool first = true;
  while (pos < footer) {
    if (footer - pos < 8) {
      out.error = "truncated chunk header";
      return out;
    }
    uint32_t offset = le32(bytes, pos), number = le32(bytes, pos + 4);
    pos += 8;
    if (number == 0 || (!first && offset < next) || uint64_t(number) * 4 > footer - pos) {
      out.error = "bad chunk";
      return out;
    }
    for (uint32_t i = 0; i < number; ++i, pos += 4) {
      uint32_t n = le32(bytes, pos);
      if (n == 0) continue;
      out.counts[uint64_t(offset) + i] = n;
      out.total += n;
      ++offsets;
    }
    next = uint64_t(offset) + number;
    first = false;
  }
  if (le32(bytes, footer) != offsets || le32(bytes, footer + 4) != out.total)
    out.error = "the footer does not match the chunks";
  return out;
}

}  // namespace tally::store::test
