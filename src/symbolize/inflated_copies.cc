#include "symbolize/inflated_copies.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "symbolize/inflated_elf.h"

namespace tally::symbolize {

InflatedCopies::~InflatedCopies() {
  for (auto& [path, copy] : copies_)
    if (copy.fd >= 0) ::close(copy.fd);
}

std::string InflatedCopies::path_of(const std::string& debug_file) {
  struct stat st {};
  if (::stat(debug_file.c_str(), &st) != 0) return "";
  auto same = [&](const Copy& c) {
    return c.device == st.st_dev && c.inode == st.st_ino && c.size == st.st_size &&
           c.modified_s == st.st_mtim.tv_sec && c.modified_ns == st.st_mtim.tv_nsec;
  };
  if (auto it = copies_.find(debug_file); it != copies_.end()) {
    if (same(it->second)) return it->second.path;
    // The file changed (a package upgrade): its old copy goes.
    if (it->second.fd >= 0) {
      ::close(it->second.fd);
      bytes_ -= it->second.bytes;
    }
    copies_.erase(it);
  }
  Copy& copy = copies_[debug_file];
  copy = {st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_nsec, st.st_mtim.tv_sec, -1, 0, "", {}};
  const int fd = ::open(dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return "";
  // Streamed into the file (write_inflated_elf): the image in memory whole was 8.7 MB for
  // libc, with its 4 MB compressed file mapped, on top of the daemon's first interval.
  const std::optional<uint64_t> size = write_inflated_elf(debug_file, fd);
  if (!size || bytes_ + *size > max_bytes_) {
    ::close(fd);
    return "";
  }
  copy.fd = fd;
  copy.path = "/proc/self/fd/" + std::to_string(fd);
  copy.bytes = *size;
  bytes_ += copy.bytes;
  return copy.path;
}

const UnitTable* InflatedCopies::units_of(const std::string& debug_file) const {
  auto it = copies_.find(debug_file);
  return it != copies_.end() && it->second.fd >= 0 && it->second.units ? &*it->second.units : nullptr;
}

void InflatedCopies::keep_units(const std::string& debug_file, UnitTable units) {
  if (auto it = copies_.find(debug_file); it != copies_.end() && it->second.fd >= 0) {
    units.offsets.shrink_to_fit();
    units.ranges.shrink_to_fit();
    it->second.units = std::move(units);
  }
}

}  // namespace tally::symbolize
