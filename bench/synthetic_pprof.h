// A synthetic pprof CPU profile, shaped like one a C++ service exporting pprof sends: stacks
// sampled from a SyntheticProgram (depths 8..64), one location per distinct PC with its
// function and source line (one in eight with an inlined callee too), one mapping per
// module's text segment with a build id, C++-like function names and source files, labels
// on some samples, each distinct (stack, labels) once with its summed counts.
//
// The message is built with the classes generated from profile.proto and serialized and
// gzipped right here (libprotobuf, zlib), not by tally's pprof writer, and the generator
// counts what it wrote: benchmarks of tally's reader check its result against numbers that
// tally did not compute.
#pragma once

#include <cstdint>
#include <string>

namespace tally::bench {

struct SyntheticPprofOptions {
  uint64_t draws = 1'000'000;  // stacks sampled; the same stack and labels drawn again are summed
  unsigned min_depth = 8;
  unsigned max_depth = 64;
  uint64_t seed = 1;
  uint32_t functions = 8000;  // in the synthetic program
  int gzip_level = 6;         // what Go's compress/gzip uses by default, as pprof does
};

struct SyntheticPprofStats {
  uint64_t samples = 0;      // Sample messages: distinct (stack, labels)
  uint64_t total_count = 0;  // sum of the samples/count values
  uint64_t locations = 0;
  uint64_t functions = 0;
  uint64_t mappings = 0;
  uint64_t raw_bytes = 0;  // the serialized message
  uint64_t bytes = 0;      // gzipped, as written
};

// The gzipped profile.
std::string synthetic_pprof_profile(const SyntheticPprofOptions& options,
                                    SyntheticPprofStats* stats = nullptr);

}  // namespace tally::bench
