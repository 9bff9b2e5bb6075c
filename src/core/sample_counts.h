// Formats that hold one number per stack or address (gperftools, DCPI) need the sample
// *count*; this finds which value of a profile that is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/checked_math.h"
#include "core/error.h"
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

// The sample type a user names (`--value`): a 0-based index, a type name ("cpu") or
// "type/unit". Empty: "samples" if present, else the default sample type, else the last
// type (pprof's rule). An unknown name lists the profile's types.
Expected<size_t> find_value_index(const Profile& p, std::string_view spec);

}  // namespace tally::core
