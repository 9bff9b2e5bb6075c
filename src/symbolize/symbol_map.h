// One image's symbols, lines and inline frames behind one narrow interface, for callers
// that look up a few addresses on one thread (disasm): open the map of a binary found by
// find_binary(), then ask for the frames of link-time addresses. It hides the compile units
// and the per-thread resolvers; symbolize() drives the same ElfIndex and AddressResolver
// itself, on all threads, for whole profiles.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/error.h"
#include "symbolize/address_resolver.h"

namespace tally::symbolize {

class SymbolMap {
 public:
  // An error (with the paths tried) when neither the binary nor a debug file was found.
  static core::Expected<std::unique_ptr<SymbolMap>> open(const FoundBinary& found);

  // The frames of each of `addresses` (ascending), innermost first: frames [ends[i-1],
  // ends[i]) are address i's (none when no function holds it). The frames stay valid as
  // long as this map.
  void lookup(std::span<const uint64_t> addresses, std::vector<Frame>& frames,
              std::vector<uint32_t>& ends);

 private:
  explicit SymbolMap(const FoundBinary& found) : index_(found, 1), resolver_(index_, 0) {}
  ElfIndex index_;
  AddressResolver resolver_;
};

}  // namespace tally::symbolize
