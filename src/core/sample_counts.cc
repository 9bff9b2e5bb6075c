#include "core/sample_counts.h"

namespace tally::core {

SampleCountColumn find_sample_counts(const Profile& p) {
  SampleCountColumn c;
  int idx = p.sample_type_index("samples");
  if (idx >= 0) {
    c.index = static_cast<size_t>(idx);
    return c;
  }
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    if (p.sample_types[i] == p.period_type && p.period > 0) {
      c.index = i;
      c.divide_by = p.period;
      c.note = "sample counts derived as " + std::string(p.str(p.sample_types[i].type)) +
               " / period " + std::to_string(p.period);
      return c;
    }
  }
  if (!p.sample_types.empty())
    c.note = "no 'samples' type; the values of '" + std::string(p.str(p.sample_types[0].type)) +
             "' are taken as sample counts";
  return c;
}

Expected<size_t> find_value_index(const Profile& p, std::string_view spec) {
  const size_t n = p.sample_types.size();
  if (n == 0) return Error{"the profile has no sample types", ErrorKind::unsupported};
  auto name = [&](size_t i) {
    return std::string(p.str(p.sample_types[i].type)) + "/" + std::string(p.str(p.sample_types[i].unit));
  };
  if (spec.empty()) {
    int samples = p.sample_type_index("samples");
    if (samples >= 0) return static_cast<size_t>(samples);
    if (p.default_sample_type != 0) {
      int d = p.sample_type_index(p.str(p.default_sample_type));
      if (d >= 0) return static_cast<size_t>(d);
    }
    return n - 1;
  }
  if (spec.find_first_not_of("0123456789") == std::string_view::npos && spec.size() < 10) {
    size_t i = std::stoul(std::string(spec));
    if (i < n) return i;
  } else {
    for (size_t i = 0; i < n; ++i)
      if (p.str(p.sample_types[i].type) == spec || name(i) == spec) return i;
  }
  std::string known;
  for (size_t i = 0; i < n; ++i) known += (i ? ", " : "") + std::to_string(i) + " " + name(i);
  return Error{"no sample type '" + std::string(spec) + "' in the profile (it has: " + known + ")",
               ErrorKind::unsupported};
}

}  // namespace tally::core
