// LEB128 numbers (DWARF's variable-length integers) read through a ByteCursor, for
// tally's own DWARF readers (LineProgram, DieWalker). A number longer than 64 bits keeps
// its low 64 bits; a number cut short throws the cursor's FormatError.
#pragma once

#include <cstdint>

#include "io/byte_cursor.h"

namespace tally::symbolize {

inline uint64_t read_uleb128(io::ByteCursor& in) {
  uint64_t value = 0;
  for (unsigned shift = 0;; shift += 7) {
    auto byte = static_cast<uint8_t>(in.word(1, std::endian::little, "a ULEB128"));
    if (shift < 64) value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
}

inline int64_t read_sleb128(io::ByteCursor& in) {
  uint64_t value = 0;
  unsigned shift = 0;
  uint8_t byte = 0;
  do {
    byte = static_cast<uint8_t>(in.word(1, std::endian::little, "a SLEB128"));
    if (shift < 64) value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    shift += 7;
  } while ((byte & 0x80) != 0);
  if (shift < 64 && (byte & 0x40) != 0) value |= ~uint64_t{0} << shift;
  return static_cast<int64_t>(value);
}

}  // namespace tally::symbolize
