// The call-frame reader on any bytes (.eh_frame and .debug_frame come from any binary a
// profile names, so they are untrusted input): each section kind, address size and byte
// order. It may give up with an error; the ranges it returns must be sorted and non-empty,
// and a lookup must return a range that holds the address.
#include <cstdint>

#include "fuzz_check.h"
#include "symbolize/call_frame_ranges.h"

using namespace tally;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  for (auto kind : {symbolize::FrameSectionKind::eh_frame, symbolize::FrameSectionKind::debug_frame}) {
    for (unsigned address_size : {4u, 8u}) {
      for (std::endian order : {std::endian::little, std::endian::big}) {
        symbolize::FrameSection section{bytes, 0x400000, kind, address_size, order};
        auto ranges = symbolize::read_code_ranges(section);
        if (!ranges) {
          FUZZ_CHECK(!ranges.error().message.empty(), "an error says what was expected");
          continue;
        }
        uint64_t previous = 0;
        for (const auto& range : *ranges) {
          FUZZ_CHECK(range.start < range.end, "ranges are not empty");
          FUZZ_CHECK(range.start >= previous, "ranges are sorted by start");
          previous = range.start;
          const auto* found = symbolize::find_code_range(*ranges, range.start);
          FUZZ_CHECK(found != nullptr && found->start <= range.start && range.start < found->end,
                     "a range's start finds a range holding it");
        }
      }
    }
  }
  return 0;
}
