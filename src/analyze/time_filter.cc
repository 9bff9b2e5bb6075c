#include "analyze/time_filter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string_view>

namespace tally::analyze {

namespace {

core::Error bad(const std::string& text, const std::string& why) {
  return core::Error{"invalid time range '" + text + "': " + why, core::ErrorKind::invalid_input};
}

// Seconds, a non-negative decimal number, as nanoseconds.
bool parse_seconds(std::string_view text, int64_t& ns) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return false;
  double seconds = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds,
                                            std::chars_format::fixed);
  if (error != std::errc() || end != text.data() + text.size()) return false;
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 9e9) return false;
  ns = static_cast<int64_t>(std::llround(seconds * 1e9));
  return true;
}

}  // namespace

core::Expected<TimeRange> parse_time_range(const std::string& text) {
  TimeRange range;
  if (text.empty()) return range;
  const size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    return bad(text, "expected START:END in seconds from the profile's start (such as 0.2:0.4, 1.5: or :2)");
  const std::string_view first = std::string_view(text).substr(0, colon);
  const std::string_view second = std::string_view(text).substr(colon + 1);
  if (first.empty() && second.empty()) return bad(text, "give START, END or both");
  if (!first.empty() && !parse_seconds(first, range.start_ns))
    return bad(text, "START '" + std::string(first) + "' is not a number of seconds (0 or more)");
  if (!second.empty() && !parse_seconds(second, range.end_ns))
    return bad(text, "END '" + std::string(second) + "' is not a number of seconds (0 or more)");
  if (range.start_ns >= range.end_ns) return bad(text, "START must be before END");
  range.text = text;
  return range;
}

SampleTimes::SampleTimes(const core::Profile& p) : profile_(p) {
  is_time_key_.assign(p.strings.size(), 0);
  for (size_t id = 0; id < p.strings.size(); ++id)
    if (p.str(static_cast<core::StringId>(id)) == "timestamp") is_time_key_[id] = 1;
  off_cpu_ = p.sample_type_index("off-cpu");
  cpu_ = p.sample_type_index("cpu");
  for (size_t s = 0; s < p.sample_count() && !any_; ++s) any_ = span(s).known;
}

SampleTimes::Span SampleTimes::span(size_t sample) const {
  Span out;
  for (const core::Label& label : profile_.labels(sample)) {
    if (label.str != 0 || label.key >= is_time_key_.size() || !is_time_key_[label.key]) continue;
    out.known = true;
    out.begin = out.end = label.num;
    break;
  }
  if (!out.known) return out;
  // Times and lengths within [0, 2^61] ns (73 years), so that no sum of two overflows
  // whatever a file holds.
  static constexpr int64_t kMaxTime = int64_t{1} << 61;
  const auto bounded = [](int64_t v) { return std::clamp<int64_t>(v, 0, kMaxTime); };
  out.begin = out.end = bounded(out.begin);
  const std::span<const int64_t> values = profile_.values(sample);
  if (off_cpu_ >= 0 && values[off_cpu_] > 0) {
    out.off_cpu = true;
    out.end = out.begin + bounded(values[off_cpu_]);
  } else if (cpu_ >= 0 && values[cpu_] > 0) {
    out.begin = std::max<int64_t>(0, out.end - bounded(values[cpu_]));
  }
  return out;
}

core::Expected<SampleTimeFilter> SampleTimeFilter::create(const core::Profile& p,
                                                          const TimeRange& range) {
  SampleTimeFilter f;
  if (!range.any()) return f;
  const SampleTimes times(p);
  if (!times.any())
    return core::Error{"--time-range " + range.text +
                           ": the profile's samples have no timestamps (tally record --off-cpu "
                           "records them)",
                       core::ErrorKind::invalid_input};
  f.kept_.assign(p.sample_count(), kDropped);
  f.cut_types_.assign(p.sample_types.size(), 0);
  for (size_t t = 0; t < p.sample_types.size(); ++t)
    f.cut_types_[t] = p.str(p.sample_types[t].unit) == "nanoseconds" ? 1 : 0;
  bool any_kept = false;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const SampleTimes::Span span = times.span(s);
    if (!span.known) continue;
    // Overlap with [start, end); a span of no length counts where it lies.
    const bool keep = span.begin < range.end_ns &&
                      (span.end > range.start_ns || (span.begin == span.end && span.begin >= range.start_ns));
    any_kept |= keep;
    if (!keep) continue;
    f.kept_[s] = kWhole;
    if (!span.off_cpu) continue;
    const int64_t inside = std::min(span.end, range.end_ns) - std::max(span.begin, range.start_ns);
    const int64_t length = span.end - span.begin;
    if (inside >= length) continue;
    f.kept_[s] = kCut;
    f.cuts_[s] = Cut{.inside = std::max<int64_t>(inside, 0), .length = length};
  }
  if (!any_kept) f.warnings_.push_back("--time-range " + range.text + " matched no sample");
  return f;
}

int64_t SampleTimeFilter::cut_value(size_t sample, size_t value_index, int64_t value) const {
  if (value_index >= cut_types_.size() || !cut_types_[value_index]) return value;
  const auto it = cuts_.find(sample);
  if (it == cuts_.end()) return value;
  const Cut& cut = it->second;
  // value * inside / length without overflow: the off-cpu and wall values are the span's
  // length (then this is `inside`), other nanosecond values scale alike.
  if (value == cut.length) return cut.inside;
  const long double scaled = static_cast<long double>(value) * cut.inside / cut.length;
  return static_cast<int64_t>(std::llround(scaled));
}

}  // namespace tally::analyze
