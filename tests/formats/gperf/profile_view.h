// Views of a profile that do not depend on how ids were numbered, so that a profile read by
// tally and one printed by google/pprof (pprof_raw.h) can be compared value by value.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "core/profile.h"

namespace tally::test {

// One sample: its count and its stack as addresses, leaf first.
struct WeightedStack {
  int64_t count = 0;
  std::vector<uint64_t> addresses;
  auto operator<=>(const WeightedStack&) const = default;
};
std::ostream& operator<<(std::ostream& os, const WeightedStack& s);

struct MappingView {
  uint64_t start = 0, limit = 0, offset = 0;
  std::string file;
  auto operator<=>(const MappingView&) const = default;
};
std::ostream& operator<<(std::ostream& os, const MappingView& m);

// Every sample as (value of sample type `value_index`, addresses), sorted: a multiset.
std::vector<WeightedStack> weighted_stacks(const core::Profile& p, size_t value_index = 0);

// The mapping of every location that has one, by the location's address.
std::map<uint64_t, MappingView> mapping_by_address(const core::Profile& p);

int64_t total_count(const std::vector<WeightedStack>& stacks);

}  // namespace tally::test
