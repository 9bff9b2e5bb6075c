// A synthetic native program for benchmark inputs: an executable and a few shared libraries,
// a few thousand functions laid out in their text segments, each with a few call sites and a
// few instructions where samples land. Stacks are random walks down the call graph from
// _start, skewed towards each function's first call site so that hot paths repeat while rare
// paths stay distinct, like the stacks of a real server. Everything is a pure function of the
// seed (own PRNG, no std distributions), so a given seed gives the same bytes everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tally::bench {

// splitmix64: small, fast and fully specified, unlike the std:: distributions.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0 (the modulo bias is irrelevant for n << 2^64).
  uint64_t below(uint64_t n) { return next() % n; }
  // True with probability numerator / denominator.
  bool chance(uint64_t numerator, uint64_t denominator) { return below(denominator) < numerator; }

 private:
  uint64_t state_;
};

class SyntheticProgram {
 public:
  struct Segment {
    uint64_t start = 0, limit = 0, offset = 0;
    std::string perms;  // "r-xp"
  };
  struct Module {
    std::string path;
    uint64_t inode = 0;
    std::vector<Segment> segments;  // in address order; exactly one is executable
  };
  struct CallSite {
    uint64_t return_address = 0;  // the instruction after the call
    uint32_t callee = 0;
  };
  struct Function {
    uint32_t module = 0;
    uint64_t start = 0;
    std::vector<CallSite> call_sites;   // hottest first
    std::vector<uint64_t> sample_pcs;   // where a sample may land when this is the leaf
  };

  // `functions` >= 8; the first four are _start, __libc_start_main, __libc_start_call_main
  // and main, which form the fixed bottom of every stack, as in a real gperftools profile.
  explicit SyntheticProgram(uint64_t seed, uint32_t functions = 8000);

  // One stack of exactly `depth` PCs (depth >= 1), most recently called first: the leaf's
  // PC, then return addresses, ending with the one in _start.
  void sample_stack(Rng& rng, unsigned depth, std::vector<uint64_t>& pcs) const;

  // The /proc/self/maps text of the process, as gperftools appends it to the profile.
  std::string maps_text() const;

  const std::vector<Module>& modules() const { return modules_; }
  const std::vector<Function>& functions() const { return functions_; }

 private:
  std::vector<Module> modules_;
  std::vector<Function> functions_;
};

}  // namespace tally::bench
