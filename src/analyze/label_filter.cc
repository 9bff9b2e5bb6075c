#include "analyze/label_filter.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <string_view>

#include "analyze/name_filter.h"

namespace tally::analyze {

namespace {

core::Error bad(const std::string& text, const std::string& why) {
  return core::Error{"invalid label filter '" + text + "': " + why, core::ErrorKind::invalid_input};
}

// A whole signed decimal number.
bool parse_number(std::string_view text, int64_t& out) {
  if (text.starts_with('+')) text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

// pprof's number with an optional unit ("7", "-3", "64kb"): digits, then letters.
bool is_number_token(std::string_view text, bool& has_unit) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  const size_t digits = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == digits) return false;
  const size_t letters = i;
  while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
  has_unit = i > letters;
  return i == text.size();
}

// pprof reads a VALUE as a range when it is N, N:, :N or N:M; anything else is regexes.
bool is_range(std::string_view value, bool& has_unit) {
  has_unit = false;
  const size_t colon = value.find(':');
  bool unit1 = false, unit2 = false;
  if (colon == std::string_view::npos) return is_number_token(value, has_unit);
  const std::string_view first = value.substr(0, colon), second = value.substr(colon + 1);
  if (first.empty() && second.empty()) return false;
  if (!first.empty() && !is_number_token(first, unit1)) return false;
  if (!second.empty() && !is_number_token(second, unit2)) return false;
  has_unit = unit1 || unit2;
  return true;
}

// Which strings (by id) a test accepts, decided on first sight.
class StringVerdicts {
 public:
  explicit StringVerdicts(size_t strings) : state_(strings, kUnknown) {}
  template <typename Test>
  bool get(core::StringId id, const Test& test) {
    if (id >= state_.size()) return test();
    if (state_[id] == kUnknown) state_[id] = test() ? kYes : kNo;
    return state_[id] == kYes;
  }

 private:
  static constexpr int8_t kUnknown = -1, kNo = 0, kYes = 1;
  std::vector<int8_t> state_;
};

struct ResolvedMatcher {
  const LabelMatcher* matcher;
  StringVerdicts key, value;
  bool matched = false;
};

bool sample_matches(const core::Profile& p, std::span<const core::Label> labels,
                    ResolvedMatcher& r) {
  const LabelMatcher& m = *r.matcher;
  for (const core::Label& label : labels) {
    if (!r.key.get(label.key, [&] { return p.str(label.key) == m.key; })) continue;
    if (m.numeric) {
      if (label.str == 0 && label.num >= m.low && label.num <= m.high) return true;
      continue;
    }
    if (label.str == 0) continue;
    const bool found = r.value.get(label.str, [&] {
      const std::string_view value = p.str(label.str);
      for (const std::regex& re : m.regexes)
        if (std::regex_search(value.begin(), value.end(), re)) return true;
      return false;
    });
    if (found) return true;
  }
  return false;
}

}  // namespace

core::Expected<LabelMatcher> parse_label_filter(const std::string& text) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos)
    return bad(text, "expected KEY=VALUE (such as pid=1234, cpu=0:3 or comm=clang)");
  LabelMatcher m;
  m.text = text;
  m.key = text.substr(0, equals);
  const std::string value = text.substr(equals + 1);
  if (m.key.empty()) return bad(text, "the label's KEY before '=' is empty");
  if (value.empty()) return bad(text, "the VALUE after '=' is empty");
  if (bool has_unit = false; is_range(value, has_unit)) {
    if (has_unit)
      return bad(text, "numbers with units are not supported; give the value in the label's unit");
    const size_t colon = value.find(':');
    const std::string_view first = std::string_view(value).substr(0, colon);
    const std::string_view second =
        colon == std::string::npos ? std::string_view() : std::string_view(value).substr(colon + 1);
    m.numeric = true;
    m.low = std::numeric_limits<int64_t>::min();
    m.high = std::numeric_limits<int64_t>::max();
    if (!first.empty() && !parse_number(first, m.low))
      return bad(text, "the number '" + std::string(first) + "' is out of range");
    if (!second.empty() && !parse_number(second, m.high))
      return bad(text, "the number '" + std::string(second) + "' is out of range");
    if (colon == std::string::npos) m.high = m.low;
    if (m.low > m.high) return bad(text, "the range's first number is above its last");
    return m;
  }
  size_t start = 0;
  while (true) {
    const size_t comma = value.find(',', start);
    const std::string piece = value.substr(start, comma - start);
    auto re = compile_report_regex(piece);
    if (!re) return bad(text, re.error().message);
    m.regexes.push_back(std::move(*re));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return m;
}

core::Expected<SampleLabelFilter> SampleLabelFilter::create(const core::Profile& p,
                                                            const LabelFilters& filters) {
  SampleLabelFilter f;
  if (!filters.any()) return f;
  std::vector<LabelMatcher> focus, ignore;
  for (const std::string& text : filters.focus) {
    auto m = parse_label_filter(text);
    if (!m) return m.error();
    focus.push_back(std::move(*m));
  }
  for (const std::string& text : filters.ignore) {
    auto m = parse_label_filter(text);
    if (!m) return m.error();
    ignore.push_back(std::move(*m));
  }
  std::vector<ResolvedMatcher> resolved_focus, resolved_ignore;
  for (const LabelMatcher& m : focus)
    resolved_focus.push_back({&m, StringVerdicts(p.strings.size()), StringVerdicts(p.strings.size())});
  for (const LabelMatcher& m : ignore)
    resolved_ignore.push_back({&m, StringVerdicts(p.strings.size()), StringVerdicts(p.strings.size())});

  f.kept_.assign(p.sample_count(), 0);
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const auto labels = p.labels(s);
    bool keep = true;
    for (ResolvedMatcher& r : resolved_focus) {
      if (sample_matches(p, labels, r)) r.matched = true;
      else keep = false;
    }
    if (!keep) continue;
    for (ResolvedMatcher& r : resolved_ignore) {
      if (sample_matches(p, labels, r)) {
        r.matched = true;
        keep = false;
        break;
      }
    }
    f.kept_[s] = keep ? 1 : 0;
  }
  for (const ResolvedMatcher& r : resolved_focus)
    if (!r.matched) f.warnings_.push_back("--label-focus " + r.matcher->text + " matched no sample");
  for (const ResolvedMatcher& r : resolved_ignore)
    if (!r.matched) f.warnings_.push_back("--label-ignore " + r.matcher->text + " matched no sample");
  return f;
}

}  // namespace tally::analyze
