#include "io/progress.h"

#include <unistd.h>

#include <cstdio>

namespace tally::io {

Progress::Progress(std::string what, uint64_t total)
    : what_(std::move(what)), total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {
  start_ = last_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { finish(); }

void Progress::redraw(uint64_t done) {
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  double secs = std::chrono::duration<double>(now - start_).count();
  double mb = static_cast<double>(done) / 1e6;
  if (total_ > 0)
    std::fprintf(stderr, "\r%s: %5.1f%%  %.0f MB  %.0f MB/s ", what_.c_str(),
                 100.0 * static_cast<double>(done) / static_cast<double>(total_), mb,
                 secs > 0 ? mb / secs : 0.0);
  else
    std::fprintf(stderr, "\r%s: %.0f MB  %.0f MB/s ", what_.c_str(), mb, secs > 0 ? mb / secs : 0.0);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

}  // namespace tally::io
