// A synthetic gperftools CPU profile, made the way libprofiler makes one: stacks sampled from
// a SyntheticProgram go through gperftools' table of 1024 buckets x 4 entries; a stack not in
// its bucket evicts the entry with the smallest count to the file, and the table is flushed
// at the end. The same stack therefore appears in several records, while rare stacks appear
// once. Written as a 64-bit little-endian file (header 0, 3, 0, period, 0; records; trailer
// 0, 1, 0; /proc/self/maps text) by a small encoder of its own, so the benchmark input does
// not depend on tally's writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tally::bench {

struct SyntheticOptions {
  uint64_t records = 1'000'000;  // stack records, the trailer not counted
  unsigned depth = 32;           // PCs per record
  uint64_t seed = 1;
  uint64_t period_us = 10'000;   // gperftools' default of 100 samples per second
  uint32_t functions = 8000;     // in the synthetic program
};

// What the file holds, counted by the generator itself: an independent expectation for
// whatever reads it.
struct SyntheticStats {
  uint64_t records = 0;
  uint64_t samples = 0;          // sum of the record counts
  uint64_t distinct_stacks = 0;  // distinct PC sequences among the records
  // Distinct PCs. Leaf PCs and return addresses never coincide here (nor does a leaf PC
  // with a return address minus one), so this is also the number of locations after
  // pprof's return-address adjustment.
  uint64_t distinct_pcs = 0;
  uint64_t bytes = 0;            // file size
};

// Receives the file in consecutive chunks.
using ByteSink = std::function<void(const uint8_t* data, size_t size)>;

SyntheticStats write_synthetic_gperf_profile(const SyntheticOptions& options,
                                             const ByteSink& sink);

// The whole file in memory.
std::vector<uint8_t> synthetic_gperf_profile(const SyntheticOptions& options,
                                             SyntheticStats* stats = nullptr);

}  // namespace tally::bench
