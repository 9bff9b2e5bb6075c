// Formats that hold one number per stack or address (gperftools, DCPI) need the sample
// *count*; this finds which value of a profile that is.
#pragma once

#include <cstdint>
#include <string>

#include "core/checked_math.h"
#include "core/profile.h"

namespace tally::core {

struct SampleCountColumn {
  size_t index = 0;              // value index
  int64_t divide_by = 1;         // the value is count x period: divide (rounding)
  std::string note;              // non-empty when a guess was made; say it to the user
  int64_t count(const Profile& p, size_t sample) const {
    int64_t v = p.values(sample)[index];
    return divide_by == 1 ? v : add_saturating(v, divide_by / 2) / divide_by;
  }
};

// "samples" if present; else the type equal to the period type, divided by the period;
// else the first type (with a note).
SampleCountColumn find_sample_counts(const Profile& p);

}  // namespace tally::core
