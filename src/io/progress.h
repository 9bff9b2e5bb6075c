// Progress: one self-overwriting status line on stderr for long work, shown only when
// stderr is a terminal so that logs and pipes stay clean and output stays deterministic.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace tally::io {

class Progress {
 public:
  // `total` bytes of work (0 if unknown).
  Progress(std::string what, uint64_t total);
  ~Progress();
  // Cheap to call often: redraws at most every 200 ms.
  void update(uint64_t done) {
    if (enabled_ && (++calls_ & 0x3ff) == 0) redraw(done);
  }
  void finish();

 private:
  void redraw(uint64_t done);
  std::string what_;
  uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace tally::io
