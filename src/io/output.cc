#include "io/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace tally::io {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

namespace {

core::Error os_error(const std::string& path, const char* what) {
  return core::Error{path + ": " + what + ": " + std::strerror(errno), core::ErrorKind::io};
}

// /dev/stdout, /dev/fd/N, /proc/PID/fd/N: links (through /proc) to a descriptor that is
// already open, not names of a file of their own.
bool is_open_file_link(const std::string& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return false;
  return path.starts_with("/dev/") || path.starts_with("/proc/");
}

std::filesystem::path directory_of(const std::string& path) {
  std::filesystem::path target(path);
  return target.has_parent_path() ? target.parent_path() : ".";
}

}  // namespace

core::Expected<AtomicFileWriter> AtomicFileWriter::open(const std::string& requested) {
  if (requested == "-") return AtomicFileWriter(requested, STDOUT_FILENO, "");
  // A device or FIFO (`-o /dev/null`, a named pipe) is written in place: renaming over it
  // would replace the device with a regular file. So is a link to an open file
  // (`-o /dev/stdout` when the shell redirected stdout to a file, /dev/fd/N,
  // /proc/self/fd/N), appending as the shell's own descriptor would: renaming over such a
  // link replaced /dev/stdout itself with a regular file.
  struct stat st {};
  const bool exists = ::stat(requested.c_str(), &st) == 0;
  if (exists && !S_ISDIR(st.st_mode) && (!S_ISREG(st.st_mode) || is_open_file_link(requested))) {
    int fd = ::open(requested.c_str(), O_WRONLY | O_CLOEXEC | (S_ISREG(st.st_mode) ? O_APPEND : 0));
    if (fd < 0) return os_error(requested, "cannot open");
    return AtomicFileWriter(requested, fd, "");
  }
  // A symbolic link to a file is kept: its target is the file replaced.
  std::string path = requested;
  if (exists) {
    std::error_code ec;
    std::filesystem::path target = std::filesystem::canonical(requested, ec);
    if (!ec) path = target.string();
  }
  const std::string name = std::filesystem::path(path).filename().string();
  std::string tmpl = (directory_of(path) / ("." + name + ".tmp.XXXXXX")).string();
  std::vector<char> buffer(tmpl.begin(), tmpl.end());
  buffer.push_back('\0');
  // Close-on-exec: a command tally stat runs must not hold (and keep alive) the file.
  int fd = ::mkostemp(buffer.data(), O_CLOEXEC);
  if (fd < 0) return os_error(path, "cannot create temporary file");
  return AtomicFileWriter(path, fd, std::string(buffer.data()));
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(other.fd_),
      temporary_(std::move(other.temporary_)),
      error_number_(other.error_number_) {
  other.fd_ = -1;
  other.temporary_.clear();
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

core::Error AtomicFileWriter::fail(const char* what) {
  if (error_number_ == 0) error_number_ = errno != 0 ? errno : EIO;
  errno = error_number_;
  return os_error(path_ == "-" ? "<stdout>" : path_, what);
}

core::Status AtomicFileWriter::write(std::string_view data) {
  errno = 0;
  if (fd_ < 0) return fail("cannot write after the file was closed");
  if (!write_all(fd_, data)) return fail("cannot write");
  return core::ok();
}

core::Status AtomicFileWriter::commit() {
  if (fd_ < 0) return fail("cannot write after the file was closed");
  const int fd = fd_;
  fd_ = -1;
  if (fd == STDOUT_FILENO) return core::ok();
  if (temporary_.empty()) {
    errno = 0;
    if (::close(fd) != 0) return fail("cannot close");
    return core::ok();
  }
  const char* failed = ::fchmod(fd, 0644) != 0 ? "cannot set permissions"
                       : ::fsync(fd) != 0        ? "cannot sync"
                                                 : nullptr;
  if (failed) {
    core::Error e = fail(failed);
    ::close(fd);
    return e;
  }
  if (::close(fd) != 0) return fail("cannot close");
  if (::rename(temporary_.c_str(), path_.c_str()) != 0)
    return fail("cannot rename temporary file into place");
  temporary_.clear();
  // Make the rename itself durable.
  int dfd = ::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return core::ok();
}

core::Status write_file_atomically(const std::string& path, std::string_view data) {
  auto writer = AtomicFileWriter::open(path);
  if (!writer) return writer.error();
  if (auto written = writer->write(data); !written) return written;
  return writer->commit();
}

core::Status make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return core::Error{path + ": cannot create directory: " + ec.message(), core::ErrorKind::io};
  return core::ok();
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

}  // namespace tally::io
