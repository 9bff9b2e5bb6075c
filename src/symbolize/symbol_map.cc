#include "symbolize/symbol_map.h"

namespace tally::symbolize {

core::Expected<std::unique_ptr<SymbolMap>> SymbolMap::open(const FoundBinary& found) {
  if (!found.found()) {
    std::string searched;
    for (const auto& path : found.searched) searched += (searched.empty() ? "" : ", ") + path;
    return core::Error{(found.problem.empty() ? "not found" : found.problem) + "; searched " + searched,
                       core::ErrorKind::io};
  }
  return std::unique_ptr<SymbolMap>(new SymbolMap(found));
}

void SymbolMap::lookup(std::span<const uint64_t> addresses, std::vector<Frame>& frames,
                       std::vector<uint32_t>& ends) {
  frames.clear();
  ends.assign(addresses.size(), 0);
  // Each compile unit's run of addresses at once: its line program runs once per run.
  for (size_t begin = 0; begin < addresses.size();) {
    const size_t unit = index_.unit_of(addresses[begin]);
    size_t end = begin + 1;
    while (end < addresses.size() && index_.unit_of(addresses[end]) == unit) ++end;
    resolver_.resolve(unit, addresses.subspan(begin, end - begin), frames,
                      std::span(ends).subspan(begin, end - begin));
    begin = end;
  }
}

}  // namespace tally::symbolize
