// A core::Profile as text, every id and string index resolved to what it refers to, in the
// model's order: two profiles render the same exactly when they hold the same content in
// the same order, whatever their StringIds are. What the differential tests compare.
#pragma once

#include <string>

#include "core/profile.h"

namespace tally::test {

std::string profile_content(const core::Profile& profile);

}  // namespace tally::test
