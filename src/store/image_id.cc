#include "store/image_id.h"

#include <fmt/format.h>

#include "core/hash.h"

namespace tally::store {

std::string image_id(const ImageKey& key) {
  if (is_image_id(key.build_id)) return key.build_id;
  const std::string identity = fmt::format("{}:{}:{}:{}:{}", key.dev_major, key.dev_minor,
                                           key.inode, key.size, key.mtime_ns);
  // The NUL keeps "1:2" + "3/x" apart from "1:23" + "/x".
  uint64_t h = core::fnv1a64(identity);
  h = core::fnv1a64(std::string_view("\0", 1), h);
  return fmt::format("{:016x}", core::fnv1a64(key.path, h));
}

bool is_image_id(std::string_view text) {
  if (text.empty() || text.size() > 128) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace tally::store
