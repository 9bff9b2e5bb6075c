// Servers for the debuginfod tests, on 127.0.0.1 and a free port: elfutils' debuginfod
// serving a directory, and a "server" that accepts connections and never answers.
#pragma once

#include <memory>
#include <string>

#include "support/test_support.h"

namespace tally::test {

// A TCP port nothing listens on at the moment (the kernel's pick for port 0).
int free_port();

// The status code of GET http://127.0.0.1:PORT/PATH, or -1 when nothing answers.
int http_status(int port, const std::string& path);

// `debuginfod -F DIR` on a free port, its database and log in `work_dir`.
class DebuginfodServer {
 public:
  DebuginfodServer(const std::string& program, const std::string& served_dir,
                   const std::string& work_dir);
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Waits until the server answers 200 for the build id's file (its scan has indexed
  // it), at most `timeout_seconds`; false (with the log in `why`) if it never did.
  bool wait_until_serving(const std::string& build_id, const std::string& file,
                          std::string& why, double timeout_seconds = 60);
  void stop();  // SIGTERM, then reaped
  std::string log() const;

 private:
  int port_ = 0;
  std::string log_;
  std::unique_ptr<BackgroundProcess> process_;
};

// python3: listens on a free port, accepts nothing, answers nothing.
class SilentServer {
 public:
  SilentServer(const std::string& python, const std::string& work_dir);
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

}  // namespace tally::test
