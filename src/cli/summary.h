// The totals of a profile (`tally cat --summary`), for any format.
#pragma once

#include <string>

#include "core/profile.h"
#include "formats/format.h"

namespace tally::cli {

void print_summary(const core::Profile& profile, const std::string& name, formats::Format format,
                   bool gzipped);

}  // namespace tally::cli
