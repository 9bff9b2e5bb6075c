// Sample label filters, pprof's -tagfocus and -tagignore under clearer names
// (--label-focus KEY=VALUE, --label-ignore KEY=VALUE): a sample is kept when every focus
// filter matches one of its labels and no ignore filter does. VALUE is a number or an
// inclusive range of whole numbers ("7", "100:", ":100", "100:200"), matched against the
// numeric labels of KEY (pid, tid, cpu), or else a comma-separated list of regexes, any
// of which found in a string label of KEY (comm, thread names, pprof's string labels)
// matches. As in pprof, a range is never matched against string labels nor a regex
// against numbers; numbers are compared as stored (no unit suffixes).
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct LabelFilters {
  std::vector<std::string> focus;   // KEY=VALUE, all must match
  std::vector<std::string> ignore;  // KEY=VALUE, none may match
  bool any() const { return !focus.empty() || !ignore.empty(); }
};

// One KEY=VALUE filter, parsed; an invalid one is an invalid_input error naming it.
struct LabelMatcher {
  std::string text;  // as given
  std::string key;
  bool numeric = false;
  int64_t low = 0, high = 0;        // numeric: the inclusive range
  std::vector<std::regex> regexes;  // otherwise: any found in the value matches
};
core::Expected<LabelMatcher> parse_label_filter(const std::string& text);

// The verdict on every sample of a profile, computed once when created.
class SampleLabelFilter {
 public:
  static core::Expected<SampleLabelFilter> create(const core::Profile& profile,
                                                  const LabelFilters& filters);
  bool keeps(size_t sample) const { return kept_.empty() || kept_[sample] != 0; }
  // One warning per filter that matched no sample.
  std::vector<std::string> warnings() const { return warnings_; }

 private:
  std::vector<uint8_t> kept_;  // per sample, when a filter is set
  std::vector<std::string> warnings_;
};

}  // namespace tally::analyze
