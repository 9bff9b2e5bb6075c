// Exponential backoff with jitter for pushes that failed for a reason that may pass (an
// outage, 5xx, 429): the n-th retry waits a random time in [d/2, d], d = min(cap, base * 2^n),
// so that a fleet of daemons does not come back at the same instant.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>

namespace tally::daemon {

class Backoff {
 public:
  Backoff(double base_seconds, double cap_seconds)
      : base_(base_seconds), cap_(cap_seconds), random_(std::random_device{}()) {}

  // The wait before the next attempt; each call doubles the bound up to the cap.
  double next() {
    const double bound = std::min(cap_, base_ * std::pow(2.0, double(failures_)));
    if (bound < cap_) ++failures_;
    return std::uniform_real_distribution<double>(bound / 2, bound)(random_);
  }
  void reset() { failures_ = 0; }
  unsigned failures() const { return failures_; }

 private:
  double base_, cap_;
  unsigned failures_ = 0;
  std::mt19937_64 random_;
};

}  // namespace tally::daemon
