#include "collect/file_build_ids.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace tally::collect {

namespace {

// NT_GNU_BUILD_ID of the ELF file open at `fd`, "" when it has none or is not ELF.
std::string build_id_of(int fd) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return {};
  std::string hex;
  const void* bytes = nullptr;
  const ssize_t size = dwelf_elf_gnu_build_id(elf, &bytes);
  if (size > 0) {
    static constexpr char kDigits[] = "0123456789abcdef";
    const auto* p = static_cast<const unsigned char*>(bytes);
    hex.reserve(static_cast<size_t>(size) * 2);
    for (ssize_t i = 0; i < size; ++i) {
      hex += kDigits[p[i] >> 4];
      hex += kDigits[p[i] & 15];
    }
  }
  elf_end(elf);
  return hex;
}

// `path` opened when it is a regular file with the mapped inode; -1 otherwise.
int open_if_same_file(const std::string& path, uint64_t inode) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != inode) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

size_t FileBuildIds::KeyHash::operator()(const Key& k) const {
  uint64_t h = k.inode * 0x9e3779b97f4a7c15ULL;
  h ^= (uint64_t(k.dev_major) << 32 | k.dev_minor) + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
  h ^= k.generation + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return static_cast<size_t>(h);
}

const std::string& FileBuildIds::of(const MmapRecord& m) {
  static const std::string kNone;
  if (!m.build_id.empty()) return m.build_id;
  if (m.filename.empty() || m.filename.front() != '/' || m.inode == 0) return kNone;
  const Key key{m.dev_major, m.dev_minor, m.inode, m.inode_generation};
  if (auto it = by_file_.find(key); it != by_file_.end()) return it->second;
  if (by_file_.size() >= kMaxFiles) by_file_.clear();

  const std::string path(m.filename);
  const std::string candidates[] = {
      fmt::format("/proc/{}/map_files/{:x}-{:x}", m.pid, m.start, m.start + m.length),
      fmt::format("/proc/{}/root{}", m.pid, path), path};
  for (const std::string& candidate : candidates) {
    int fd = open_if_same_file(candidate, m.inode);
    if (fd < 0) continue;
    ++stats_.files_read;
    std::string id = build_id_of(fd);
    ::close(fd);
    return by_file_.emplace(key, std::move(id)).first->second;
  }
  // Not cached: another process may still map the file where it can be reached.
  ++stats_.unreachable;
  return kNone;
}

}  // namespace tally::collect
