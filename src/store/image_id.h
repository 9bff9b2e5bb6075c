// Image identity in the profile database. An image (an executable or shared object) is
// known by its build id when it has one; otherwise by a hash of where and what the file
// was (device, inode, path, size, modification time), so that a rebuilt or deleted file
// never mixes its profile with its successor's: the id, not the path, is the key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tally::store {

struct ImageKey {
  std::string path{};    // as the kernel named the mapped file: "/usr/lib/libc.so.6", "[kernel.kallsyms]"
  std::string build_id{};  // lower-case hex; "" when unknown
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  uint64_t size = 0;     // of the file when first seen; 0 when unknown
  int64_t mtime_ns = 0;  // of the file when first seen; 0 when unknown
  bool operator==(const ImageKey&) const = default;
};

// The build id when there is one, else 16 hex digits: FNV-1a 64 of the other fields.
// Always hex digits, as the DCPI header's `image` line requires.
std::string image_id(const ImageKey& key);

// 1 to 128 hex digits: what image_id() makes, and safe as a directory name.
bool is_image_id(std::string_view text);

}  // namespace tally::store
