// A synthetic callgrind file shaped like valgrind's (`--dump-instr=yes --collect-jumps=yes`,
// several dumps in one file): many functions spread over objects and source files,
// `positions: instr line`, compressed names ("fn=(12) name" once, then "fn=(12)"),
// compressed subpositions ("+3 -1", "*"), calls= with cob=/cfi= where the callee lives
// elsewhere, jcnd=FOLLOWED/EXECUTED and jump= followed by their source position, code
// inlined from headers under fi=/fe=, and summary:/totals: per part. Written by its own
// small encoder (not tally's writer), a pure function of the options; it counts what it
// wrote so that a benchmark can check the reader's result.
#pragma once

#include <cstdint>
#include <string>

namespace tally::bench {

struct SyntheticCallgrindOptions {
  uint64_t seed = 1;
  uint32_t parts = 8;          // dumps in the file
  uint32_t functions = 30000;  // distinct functions in the program
  uint32_t objects = 24;       // the executable and its shared libraries
  uint32_t files = 2000;       // source files
};

struct SyntheticCallgrindStats {
  uint64_t bytes = 0;
  uint64_t cost_lines = 0;  // self-cost lines (not a call's or a jump's line)
  uint64_t calls = 0;       // calls= lines
  uint64_t jumps = 0;       // jump= and jcnd= lines
  int64_t total_ir = 0;     // the sum of the Ir column over self-cost lines
};

std::string synthetic_callgrind(const SyntheticCallgrindOptions& options,
                                SyntheticCallgrindStats* stats = nullptr);

}  // namespace tally::bench
