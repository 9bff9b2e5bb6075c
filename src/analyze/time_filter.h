// The time-range filter (--time-range START:END, the web timeline's selection): keeps the
// samples whose time span overlaps the range. Times are the "timestamp" labels that
// `tally record --off-cpu` gives every sample (nanoseconds since the recording began); the
// range is given in seconds from that start, either end open ("0.2:0.4", "1.5:", ":2").
// A sample's span: an off-CPU sample covers [t, t + its off-cpu nanoseconds] (it is stamped
// when the thread left the CPU), an on-CPU sample [t - its cpu nanoseconds, t] (stamped
// when the period that it counts ended). An off-CPU sample is cut to the part of its span
// inside the range: its nanosecond values (off-cpu, wall) scaled to the overlap, so that a
// 300 ms wait of which 10 ms lie in the range counts 10 ms. An on-CPU sample is a point of
// at most one sampling period: kept whole when its span overlaps the range, else dropped.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct TimeRange {
  std::string text;  // as given; "" = no range
  int64_t start_ns = 0;
  int64_t end_ns = std::numeric_limits<int64_t>::max();
  bool any() const { return !text.empty(); }
};

// "START:END" in seconds (decimals allowed), either side empty for an open end; "" is no
// range. An invalid one is an invalid_input error that names it and says what was expected.
core::Expected<TimeRange> parse_time_range(const std::string& text);

// Where each sample lies in time, from its timestamp label and values.
class SampleTimes {
 public:
  explicit SampleTimes(const core::Profile& profile);
  // Whether any sample has a timestamp label.
  bool any() const { return any_; }
  struct Span {
    bool known = false;  // the sample has a timestamp
    bool off_cpu = false;
    int64_t begin = 0, end = 0;  // ns, within [0, 2^62]
  };
  Span span(size_t sample) const;

 private:
  const core::Profile& profile_;
  std::vector<uint8_t> is_time_key_;  // per string id
  int off_cpu_ = -1, cpu_ = -1;       // sample type indexes
  bool any_ = false;
};

// The verdict on every sample for a range, computed once when created. A range on a profile
// without timestamps is an invalid_input error (there is nothing to select by).
class SampleTimeFilter {
 public:
  static core::Expected<SampleTimeFilter> create(const core::Profile& profile, const TimeRange& range);
  bool keeps(size_t sample) const { return kept_.empty() || kept_[sample] != kDropped; }
  // Value `value_index` of a kept sample, whose whole value is `value`: cut to the range for
  // an off-CPU sample that lies partly outside it (nanosecond types only: the count of
  // samples stays whole), else `value`.
  int64_t value(size_t sample, size_t value_index, int64_t value) const {
    if (kept_.empty() || kept_[sample] != kCut) return value;
    return cut_value(sample, value_index, value);
  }
  std::vector<std::string> warnings() const { return warnings_; }

 private:
  static constexpr uint8_t kDropped = 0, kWhole = 1, kCut = 2;
  int64_t cut_value(size_t sample, size_t value_index, int64_t value) const;
  struct Cut {
    int64_t inside = 0, length = 1;  // ns of the span inside the range, and in all
  };
  std::vector<uint8_t> kept_;  // per sample, when a range is set: kDropped, kWhole, kCut
  // The samples cut (at most two per thread: those across the range's ends).
  std::unordered_map<size_t, Cut> cuts_;
  std::vector<uint8_t> cut_types_;  // per sample type: 1 for a nanosecond value
  std::vector<std::string> warnings_;
};

}  // namespace tally::analyze
