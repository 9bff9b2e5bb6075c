#include "analyze/confidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tally::analyze {

double share_interval_95(int64_t hits, int64_t samples) {
  if (samples <= 0) return 0;
  const double n = static_cast<double>(samples);
  const double p = std::clamp(std::fabs(static_cast<double>(hits)) / n, 0.0, 1.0);
  constexpr double kZ95 = 1.959963984540054;  // the 97.5% quantile of the standard normal
  return kZ95 * std::sqrt(p * (1 - p) / n) * 100;
}

std::string format_interval(double half_width_percent) {
  if (half_width_percent == 0) return "±0%";
  if (half_width_percent >= 1) return fmt::format("±{:.1f}%", half_width_percent);
  return fmt::format("±{:.2f}%", half_width_percent);
}

}  // namespace tally::analyze
