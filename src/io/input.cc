#include "io/input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/gzip.h"

namespace tally::io {

namespace {

core::Error os_error(const std::string& path, const char* what) {
  return core::Error{path + ": " + what + ": " + std::strerror(errno), core::ErrorKind::io};
}

bool read_all(int fd, std::vector<uint8_t>& out) {
  uint8_t buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out.insert(out.end(), buf, buf + n);
  }
}

}  // namespace

Input::Input(Input&& o) noexcept { *this = std::move(o); }

Input& Input::operator=(Input&& o) noexcept {
  if (this != &o) {
    reset();
    name_ = std::move(o.name_);
    owned_ = std::move(o.owned_);
    map_ = o.map_;
    size_ = o.size_;
    released_ = o.released_;
    was_gzipped_ = o.was_gzipped_;
    data_ = map_ ? o.data_ : owned_.data();
    o.map_ = nullptr;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

Input::~Input() { reset(); }

void Input::reset() {
  if (map_) ::munmap(map_, size_);
  map_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  owned_.clear();
}

Input Input::from_bytes(std::string name, std::vector<uint8_t> bytes) {
  Input in;
  in.name_ = std::move(name);
  in.owned_ = std::move(bytes);
  in.data_ = in.owned_.data();
  in.size_ = in.owned_.size();
  return in;
}

core::Expected<Input> Input::open(const std::string& path) {
  Input in;
  in.name_ = path == "-" ? "<stdin>" : path;
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return os_error(path, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    auto err = os_error(path, "cannot stat");
    if (fd != STDIN_FILENO) ::close(fd);
    return err;
  }
  if (S_ISDIR(st.st_mode)) {
    if (fd != STDIN_FILENO) ::close(fd);
    return core::Error{path + ": is a directory, expected a profile file", core::ErrorKind::io};
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      auto err = os_error(path, "cannot map");
      if (fd != STDIN_FILENO) ::close(fd);
      return err;
    }
    ::madvise(p, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
    in.map_ = p;
    in.data_ = static_cast<const uint8_t*>(p);
    in.size_ = static_cast<size_t>(st.st_size);
  } else {
    if (!read_all(fd, in.owned_)) {
      auto err = os_error(path, "cannot read");
      if (fd != STDIN_FILENO) ::close(fd);
      return err;
    }
    in.data_ = in.owned_.data();
    in.size_ = in.owned_.size();
  }
  if (fd != STDIN_FILENO) ::close(fd);

  if (is_gzip(in.bytes())) {
    auto inflated = gunzip(in.bytes(), in.name_);
    if (!inflated) return inflated.error();
    std::string name = in.name_;
    in = from_bytes(std::move(name), std::move(*inflated));
    in.was_gzipped_ = true;
  }
  return in;
}

void Input::release_before(uint64_t offset) const {
  if (!map_) return;
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t end = static_cast<size_t>(offset) / page * page;
  if (end <= released_ + (size_t(4) << 20)) return;  // in batches of 4 MB
  ::madvise(static_cast<uint8_t*>(map_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

void Input::release(uint64_t offset, uint64_t size) const {
  if (!map_ || offset >= size_) return;
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Whole pages inside the range only: the pages it shares with its neighbours stay.
  const size_t first = (static_cast<size_t>(offset) + page - 1) / page * page;
  const size_t end = static_cast<size_t>(std::min<uint64_t>(offset + size, size_)) / page * page;
  if (end > first) ::madvise(static_cast<uint8_t*>(map_) + first, end - first, MADV_DONTNEED);
}

}  // namespace tally::io
