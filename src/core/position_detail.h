// How much of a profile's positions a reader keeps. Reports by function (top, peek, flame,
// diff at function or file granularity) need only the function of each position; a reader
// whose format lists a position per instruction (callgrind --dump-instr=yes) can then make
// one location per function instead of one per instruction, and its memory does not grow
// with the number of instructions.
#pragma once

namespace tally::core {

enum class PositionDetail {
  full,       // every position (address, line) is its own location
  functions,  // one location per function and object: address 0, line 0; costs and call
              // edges summed per function (call edges per caller/callee function)
};

}  // namespace tally::core
