// The daemon's log: one line per event, "2025-01-02T03:04:05Z tally daemon: ...", to
// standard error (systemd's journal) or appended to a file.
#pragma once

#include <cstdio>
#include <string>

#include "core/error.h"

namespace tally::daemon {

class Log {
 public:
  // "" or "-": standard error.
  static core::Expected<Log> open(const std::string& path);
  Log(Log&& other) noexcept : file_(other.file_) { other.file_ = nullptr; }
  Log& operator=(Log&&) = delete;
  ~Log();
  void line(const std::string& text);

 private:
  explicit Log(std::FILE* file) : file_(file) {}
  std::FILE* file_;
};

}  // namespace tally::daemon
