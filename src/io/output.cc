#include "io/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace tally::io {

namespace {

core::Error os_error(const std::string& path, const char* what) {
  return core::Error{path + ": " + what + ": " + std::strerror(errno), core::ErrorKind::io};
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

namespace {

// A device or FIFO (`-o /dev/null`, `-o /dev/stdout`, a named pipe) is written in place:
// renaming over it would replace the device with a regular file.
core::Status write_in_place(const std::string& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return os_error(path, "cannot open");
  if (!write_all(fd, data)) {
    core::Error e = os_error(path, "cannot write");
    ::close(fd);
    return e;
  }
  if (::close(fd) != 0) return os_error(path, "cannot close");
  return core::ok();
}

}  // namespace

core::Status write_file_atomically(const std::string& path, std::string_view data) {
  if (path == "-") {
    if (!write_all(STDOUT_FILENO, data)) return os_error("<stdout>", "cannot write");
    return core::ok();
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    return write_in_place(path, data);
  std::filesystem::path target(path);
  std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) return os_error(path, "cannot create temporary file");
  std::string tmp(name.data());
  auto fail = [&](const char* what) {
    core::Error e = os_error(path, what);
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  };
  if (!write_all(fd, data)) return fail("cannot write");
  if (::fchmod(fd, 0644) != 0) return fail("cannot set permissions");
  if (::fsync(fd) != 0) return fail("cannot sync");
  if (::close(fd) != 0) {
    core::Error e = os_error(path, "cannot close");
    ::unlink(tmp.c_str());
    return e;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    core::Error e = os_error(path, "cannot rename temporary file into place");
    ::unlink(tmp.c_str());
    return e;
  }
  // Make the rename itself durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return core::ok();
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
