// How much of a profile's positions a reader keeps. Reports by function (top, peek, flame,
// diff at function or file granularity) need only the function of each position; a reader
// whose format lists a position per instruction (callgrind --dump-instr=yes) can then make
// one location per function instead of one per instruction, and its memory does not grow
// with the number of instructions.
#pragma once

#include <cstdint>

namespace tally::core {

enum class PositionDetail {
  full,       // every position (address, line) is its own location
  functions,  // one location per function and object: address 0, line 0; costs and call
              // edges summed per function (call edges per caller/callee function)
};

// What a full read would have made, counted by a read by function (`tally cat --summary`
// prints them): locations (distinct positions), samples (per part, the positions with self
// cost), call edges and jumps (per part, between positions).
struct PositionCounts {
  bool counted = false;  // set by a reader that read by function and counted
  uint64_t locations = 0;
  uint64_t samples = 0;
  uint64_t calls = 0;
  uint64_t jumps = 0;
};

}  // namespace tally::core
