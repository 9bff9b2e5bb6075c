// The last element of a file's path, as every report, writer and symbolizer names an image
// or a source file by it.
#pragma once

#include <string_view>

namespace tally::core {

// Go's filepath.Base (which pprof names files with) but for "" staying "": trailing slashes
// are ignored, "/usr/lib/libc.so.6" -> "libc.so.6", "dir/" -> "dir", "/" -> "/".
inline std::string_view base_name(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos || path.size() == 1 ? path : path.substr(slash + 1);
}

}  // namespace tally::core
