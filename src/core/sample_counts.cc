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

}  // namespace tally::core
