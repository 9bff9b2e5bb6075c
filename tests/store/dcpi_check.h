// The store tests' own reader of DCPI v0 files (dcpiformat(4)), independent of
// src/formats/dcpi: header lines up to "samples", chunks of little-endian uint32 counts,
// the footer. Checks what the spec requires and that the footer matches the chunks.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tally::store::test {

struct CheckedDcpi {
  std::string error;  // "" when the file is well formed
  std::map<std::string, std::string> header;
  std::map<uint64_t, uint64_t> counts;  // offset from tstart -> count (non-zero only)
  uint64_t total = 0;
};

CheckedDcpi check_dcpi(const std::string& bytes);

}  // namespace tally::store::test
