// The daemon's log: one line per event, "2025-01-02T03:04:05Z tally daemon: ...", to
// standard error (systemd's journal) or appended to a file.
#pragma once

#include <cstdio>
#include <string>

#include "core/error.h"

namespace tally::cli {

class DaemonLog {
 public:
  // "" or "-": standard error.
  static core::Expected<DaemonLog> open(const std::string& path);
  DaemonLog(DaemonLog&& other) noexcept : file_(other.file_) { other.file_ = nullptr; }
  DaemonLog& operator=(DaemonLog&&) = delete;
  ~DaemonLog();
  void line(const std::string& text);

 private:
  explicit DaemonLog(std::FILE* file) : file_(file) {}
  std::FILE* file_;
};

}  // namespace tally::cli
