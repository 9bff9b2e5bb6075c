// Test-side views of conversion results: a DCPI file or a profile as a plain
// address -> count histogram, and header lookups, so expectations can be written by hand.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/profile.h"
#include "formats/dcpi/dcpi_file.h"

namespace tally::dcpi::test {

using Histogram = std::map<uint64_t, uint64_t>;  // absolute address -> samples

inline std::string header_value(const DcpiFile& f, const std::string& key) {
  for (const HeaderLine& l : f.header)
    if (l.key == key) return l.value;
  return "<absent>";
}

inline uint64_t hex_value(const DcpiFile& f, const std::string& key) {
  return std::stoull(header_value(f, key), nullptr, 16);
}

// tstart + offset -> count, zero counts left out.
inline Histogram histogram_of(const DcpiFile& f) {
  Histogram h;
  const uint64_t tstart = hex_value(f, "tstart");
  for (const Chunk& c : f.chunks)
    for (size_t i = 0; i < c.counts.size(); ++i)
      if (c.counts[i] != 0) h[tstart + c.offset + i] += c.counts[i];
  return h;
}

inline uint64_t total_of(const Histogram& h) {
  uint64_t n = 0;
  for (const auto& [address, count] : h) n += count;
  return n;
}

}  // namespace tally::dcpi::test
