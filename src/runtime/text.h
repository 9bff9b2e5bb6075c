// String copies into fixed buffers for code that cannot use std::string (libtally).
#pragma once

#include <cstddef>
#include <cstring>

namespace tally::runtime {

// Copies `text` into `out` (size bytes, always terminated); false if it had to be cut.
inline bool copy_text(char* out, size_t size, const char* text) {
  if (size == 0) return false;
  size_t length = strlen(text);
  bool fits = length < size;
  if (!fits) length = size - 1;
  memcpy(out, text, length);
  out[length] = '\0';
  return fits;
}

}  // namespace tally::runtime
