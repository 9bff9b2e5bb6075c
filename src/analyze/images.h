// Cost per image (dcpiprof -i): the samples whose leaf lies in each mapping (an executable
// or shared object), most first. For the profile database's many images, before the
// per-function table of `tally top --db`; works on any stack profile with mappings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct ImageRow {
  std::string name;  // the mapping's file; "[unknown]" for samples outside every mapping
  int64_t value = 0;
  int64_t samples = 0;
};

struct ImageReport {
  std::string value_type, value_unit;
  int64_t total = 0, total_samples = 0;
  std::vector<ImageRow> rows;  // by value, then name
};

// `sample_index` as for top (report_value_index). Mappings of the same file are one row.
core::Expected<ImageReport> compute_images(const core::Profile& profile,
                                           const std::string& sample_index);

// "   samples   share    cum%   cpu-clock  image" rows; values scaled like top's.
std::string format_images(const ImageReport& report);

}  // namespace tally::analyze
