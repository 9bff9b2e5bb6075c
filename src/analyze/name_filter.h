// pprof's name filters (-focus, -ignore, -hide, -show), with its semantics: focus keeps
// the samples whose stack has a frame matching, ignore drops those with one (ignore wins);
// hide removes the matching frames (inline lines) from every stack, show keeps only the
// matching ones. A frame matches when its function name or source file matches, or its
// mapping's file does. Regexes are searched (a match anywhere in the name).
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <vector>

#include "analyze/label_filter.h"
#include "analyze/time_filter.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

// A report's REGEX argument (peek, list, disasm), compiled as the filters are; an invalid
// one is an invalid_input error naming it.
core::Expected<std::regex> compile_report_regex(const std::string& text);

struct NameFilters {
  std::string focus, ignore, hide, show;
  // Carried here so that every report that filters by name filters by label too.
  LabelFilters labels;
  // ... and by time (--time-range), parsed.
  TimeRange time;
  bool names() const { return !focus.empty() || !ignore.empty() || !hide.empty() || !show.empty(); }
  bool any() const { return names() || labels.any() || time.any(); }
  // pprof's "Active filters:" lines ("focus=REGEX", "tagfocus=KEY=VALUE"), in its order.
  std::vector<std::string> active() const;
};

class LocationFilter {
 public:
  // Compiles the regexes and classifies every location of `profile`.
  static core::Expected<LocationFilter> create(const core::Profile& profile,
                                               const NameFilters& filters);

  // Focus/ignore on sample `sample` (its labels and time) and its stack.
  bool keeps(size_t sample, std::span<const core::LocationId> stack) const {
    return labels_.keeps(sample) && time_.keeps(sample) && keeps_stack(stack);
  }
  // Value `value_index` of a kept sample as the reports count it: cut to the time range for
  // an off-CPU sample partly outside it (analyze/time_filter.h), else the profile's value.
  int64_t value(const core::Profile& profile, size_t sample, size_t value_index) const {
    return time_.value(sample, value_index, profile.values(sample)[value_index]);
  }
  // The lines of a location that hide/show keep (all when neither is set); a location
  // whose lines are all removed is gone from every stack (`hidden`).
  std::span<const core::Line> lines(const core::Profile& profile, core::LocationId id) const;
  bool hidden(core::LocationId id) const { return !hidden_.empty() && hidden_[id - 1]; }
  // Filters that matched nothing, for a warning ("focus", "hide", ...).
  std::vector<std::string> unmatched() const;
  // Label filters and a time range that matched no sample, as whole warnings.
  std::vector<std::string> label_warnings() const {
    std::vector<std::string> out = labels_.warnings();
    for (std::string& w : time_.warnings()) out.push_back(std::move(w));
    return out;
  }

 private:
  bool keeps_stack(std::span<const core::LocationId> stack) const;
  enum class Verdict : uint8_t { none, focused, ignored };
  bool has_focus_ = false;
  std::vector<Verdict> verdicts_;                 // per location
  std::vector<uint8_t> hidden_;                   // per location, when hide/show set
  std::vector<std::optional<core::LineList>> kept_lines_;  // per location, if changed
  bool focus_matched_ = false, ignore_matched_ = false, hide_matched_ = false,
       show_matched_ = false;
  NameFilters filters_;
  SampleLabelFilter labels_;
  SampleTimeFilter time_;
};

}  // namespace tally::analyze
