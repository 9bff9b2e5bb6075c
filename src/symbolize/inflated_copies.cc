#include "symbolize/inflated_copies.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "io/input.h"
#include "io/output.h"
#include "symbolize/inflated_elf.h"

namespace tally::symbolize {

namespace {
constexpr size_t kPiece = 4096;
}  // namespace

InflatedCopies::~InflatedCopies() {
  for (auto& [path, copy] : copies_)
    if (copy.fd >= 0) ::close(copy.fd);
}

std::string InflatedCopies::path_of(const std::string& debug_file, unsigned threads) {
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
  auto input = io::Input::open(debug_file);
  if (!input || input->was_gzipped()) return "";
  auto image = inflate_elf(input->bytes(), threads);
  if (!image || bytes_ + image->size() > max_bytes_) return "";
  const int fd = ::open(dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return "";
  // Written a page at a time: one big write puts the copy in the page cache as 2 MB folios
  // (ext4, Linux 6.18), and a fault on a mapping of it maps the whole folio, so that libdw
  // touching a few bytes here and there made all 8.7 MB of libc's copy resident in the
  // daemon at each interval; page-sized folios map 64 KB around a fault.
  std::string_view bytes(reinterpret_cast<const char*>(image->data()), image->size());
  for (; !bytes.empty(); bytes.remove_prefix(std::min(bytes.size(), kPiece))) {
    if (!io::write_all(fd, bytes.substr(0, kPiece))) {
      ::close(fd);
      return "";
    }
  }
  copy.fd = fd;
  copy.path = "/proc/self/fd/" + std::to_string(fd);
  copy.bytes = image->size();
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
