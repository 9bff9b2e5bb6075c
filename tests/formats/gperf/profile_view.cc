#include "profile_view.h"

#include <algorithm>
#include <ios>

namespace tally::test {

std::ostream& operator<<(std::ostream& os, const WeightedStack& s) {
  os << s.count << ":" << std::hex;
  for (uint64_t a : s.addresses) os << " 0x" << a;
  return os << std::dec;
}

std::ostream& operator<<(std::ostream& os, const MappingView& m) {
  return os << std::hex << "0x" << m.start << "/0x" << m.limit << "/0x" << m.offset << std::dec
            << " '" << m.file << "'";
}

std::vector<WeightedStack> weighted_stacks(const core::Profile& p, size_t value_index) {
  std::vector<WeightedStack> out;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    WeightedStack w{.count = p.values(s)[value_index], .addresses = {}};
    for (core::LocationId id : p.stack(s)) w.addresses.push_back(p.location(id).address);
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<uint64_t, MappingView> mapping_by_address(const core::Profile& p) {
  std::map<uint64_t, MappingView> out;
  for (const core::Location& l : p.locations) {
    if (l.mapping == 0) continue;
    const core::Mapping& m = p.mapping(l.mapping);
    out[l.address] = {m.start, m.limit, m.offset, std::string(p.str(m.file))};
  }
  return out;
}

int64_t total_count(const std::vector<WeightedStack>& stacks) {
  int64_t total = 0;
  for (const WeightedStack& s : stacks) total += s.count;
  return total;
}

}  // namespace tally::test
