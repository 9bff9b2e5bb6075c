// The daemon's control socket, DIR/control.sock (DCPI's dcpictl): `tally flush` and
// `tally epoch` connect, send one line ("flush", "epoch", "status") and read one line
// back ("ok TEXT" or "error TEXT"). The socket file is 0600 and the daemon answers only
// its own user and root (SO_PEERCRED), so no one else can make it write or switch epochs.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "core/error.h"

namespace tally::daemon {

std::string control_socket_path(const std::string& db_dir);

class ControlServer {
 public:
  struct Request {
    int fd = -1;
    std::string command;
    uid_t uid = 0;
    pid_t pid = 0;
  };

  // Binds and listens at `path`, replacing a stale socket file there (the caller holds the
  // database's writer lock, so no live daemon owns it).
  static core::Expected<ControlServer> listen(const std::string& path);
  ControlServer(ControlServer&& other) noexcept;
  ControlServer& operator=(ControlServer&&) = delete;
  ~ControlServer();  // closes and removes the socket file

  int fd() const { return fd_; }
  // The next waiting request, if any (never blocks on accept; a client gets 2 s to send its
  // line). Clients that are neither the daemon's user nor root are answered "error" here.
  // `refused` receives a line for the log about such a client.
  std::optional<Request> accept(std::string& refused);
  // Sends "ok TEXT" / "error TEXT" and closes the request.
  static void reply(Request& request, bool ok, const std::string& text);

 private:
  ControlServer(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// Sends `command` to the daemon of `db_dir` and waits up to `timeout_ms` for the answer:
// its TEXT when "ok", an error otherwise (also when no daemon runs there).
core::Expected<std::string> send_control(const std::string& db_dir, const std::string& command,
                                         int timeout_ms);

}  // namespace tally::daemon
