// The HTTP side of `tally serve`, on cpp-httplib: binds, checks every request (GET or
// HEAD only, Host header), then answers pages and embedded assets from the binary and
// /api/ from Api. Read-only: nothing a request says reaches the filesystem.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "web/api.h"

namespace httplib {
class Server;
}

namespace tally::web {

class Server {
 public:
  explicit Server(Api& api);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds HOST:PORT; port 0 takes a free port; with `next_free`, a busy port is followed
  // by the next ones (up to 100 further). Returns the port bound.
  core::Expected<int> bind(const std::string& host, int port, bool next_free);
  // "http://127.0.0.1:8080/" once bound.
  std::string url() const;
  // Answers requests until stop(); false when listening failed.
  bool run();
  // From any thread (not from a signal handler); also before run() has started, in which
  // case run() returns at once (httplib's own stop() does nothing until it listens).
  void stop();

 private:
  void install_handlers();

  Api& api_;
  std::unique_ptr<httplib::Server> http_;
  std::string host_;
  int port_ = 0;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> run_returned_{false};
  std::vector<std::string> allowed_hosts_;
};

}  // namespace tally::web
