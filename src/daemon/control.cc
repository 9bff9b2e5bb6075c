#include "daemon/control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tally::daemon {

namespace {

constexpr size_t kMaxLine = 4096;

core::Error os_error(const std::string& what) {
  return core::Error{fmt::format("{}: {}", what, std::strerror(errno)), core::ErrorKind::io};
}

core::Expected<sockaddr_un> socket_address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path)
    return core::Error{fmt::format("{}: the path is too long for a unix socket ({} bytes, at most "
                                   "{}); use a database directory with a shorter path",
                                   path, path.size(), sizeof address.sun_path - 1),
                       core::ErrorKind::unsupported};
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

void set_timeouts(int fd, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads up to the first newline (excluded) or the end; false on a timeout or error.
bool read_line(int fd, std::string& line) {
  line.clear();
  char buf[256];
  while (line.size() < kMaxLine) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    line.append(buf, static_cast<size_t>(n));
    if (auto nl = line.find('\n'); nl != std::string::npos) {
      line.resize(nl);
      return true;
    }
  }
  return true;
}

}  // namespace

std::string control_socket_path(const std::string& db_dir) { return db_dir + "/control.sock"; }

core::Expected<ControlServer> ControlServer::listen(const std::string& path) {
  auto address = socket_address(path);
  if (!address) return address.error();
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return os_error("cannot create the control socket");
  ::unlink(path.c_str());  // a stale socket of a daemon that was killed
  // Created 0600 from the start: no window in which others could connect.
  const mode_t old_mask = ::umask(077);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof *address);
  ::umask(old_mask);
  if (bound != 0 || ::chmod(path.c_str(), 0600) != 0 || ::listen(fd, 16) != 0) {
    core::Error e = os_error(path + ": cannot listen");
    ::close(fd);
    return e;
  }
  return ControlServer(fd, path);
}

ControlServer::ControlServer(ControlServer&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

ControlServer::~ControlServer() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(path_.c_str());
}

std::optional<ControlServer::Request> ControlServer::accept(std::string& refused) {
  int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return std::nullopt;
  set_timeouts(fd, 2000);
  Request request;
  request.fd = fd;
  ucred cred{};
  socklen_t length = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
    refused = "a control client whose credentials cannot be read was refused";
    reply(request, false, "cannot read your credentials");
    return std::nullopt;
  }
  request.uid = cred.uid;
  request.pid = cred.pid;
  if (cred.uid != 0 && cred.uid != ::geteuid()) {
    refused = fmt::format("refused a control request of uid {} (pid {}): only uid {} and root may "
                          "control this daemon", cred.uid, cred.pid, ::geteuid());
    reply(request, false, "permission denied: only the daemon's user and root may control it");
    return std::nullopt;
  }
  if (!read_line(fd, request.command)) {
    refused = fmt::format("a control client (pid {}) sent no command in time", cred.pid);
    reply(request, false, "no command received");
    return std::nullopt;
  }
  return request;
}

void ControlServer::reply(Request& request, bool ok, const std::string& text) {
  std::string line = (ok ? "ok " : "error ") + text;
  std::replace(line.begin(), line.end(), '\n', ' ');
  send_all(request.fd, line + "\n");
  ::close(request.fd);
  request.fd = -1;
}

core::Expected<std::string> send_control(const std::string& db_dir, const std::string& command,
                                         int timeout_ms) {
  const std::string path = control_socket_path(db_dir);
  auto address = socket_address(path);
  if (!address) return address.error();
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return os_error("cannot create a socket");
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof *address) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == ENOENT || err == ECONNREFUSED)
      return core::Error{fmt::format("no tally daemon is running on {} ({}: {})", db_dir, path,
                                     std::strerror(err)),
                         core::ErrorKind::io};
    errno = err;
    return os_error(path + ": cannot connect");
  }
  set_timeouts(fd, timeout_ms);
  std::string answer;
  const bool sent = send_all(fd, command + "\n");
  const bool got = sent && read_line(fd, answer);
  ::close(fd);
  if (!sent || !got || answer.empty())
    return core::Error{fmt::format("{}: the daemon did not answer '{}' within {} s", path, command,
                                   timeout_ms / 1000),
                       core::ErrorKind::io};
  if (answer.starts_with("ok")) return answer.size() > 3 ? answer.substr(3) : std::string();
  if (answer.starts_with("error "))
    return core::Error{"the daemon: " + answer.substr(6), core::ErrorKind::io};
  return core::Error{path + ": unexpected answer '" + answer + "'", core::ErrorKind::io};
}

}  // namespace tally::daemon
