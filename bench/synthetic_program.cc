#include "synthetic_program.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <stdexcept>

namespace tally::bench {

namespace {

constexpr uint64_t kPage = 0x1000;
constexpr uint32_t kFixedBottom = 4;  // _start, __libc_start_main, __libc_start_call_main, main

uint64_t round_up(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

struct ModuleSpec {
  const char* path;
  uint64_t inode;
  unsigned share;  // of the non-fixed functions, in percent
};

// The executable first; then libraries, in the order their functions follow in the index
// space (calls mostly go to nearby indices, so a library's functions call each other).
constexpr ModuleSpec kModules[] = {
    {"/srv/synthetic/bin/synthetic-server", 10952894, 70},
    {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", 333430, 10},
    {"/usr/lib/x86_64-linux-gnu/libssl.so.3", 333512, 6},
    {"/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", 333601, 3},
    {"/usr/lib/x86_64-linux-gnu/libm.so.6", 333211, 3},
    {"/usr/lib/x86_64-linux-gnu/libc.so.6", 332835, 8},
};
constexpr uint32_t kLibc = 5;
constexpr uint64_t kExecutableBase = 0x55d1c0a00000;
constexpr uint64_t kLibraryBase = 0x7f3a5c000000;
constexpr uint64_t kVdso = 0x7f3a5f7d8000;

// Distinct values in [lo, lo + n), `count` of them (count <= n), in draw order.
std::vector<uint64_t> distinct_draws(Rng& rng, uint64_t lo, uint64_t n, uint64_t count) {
  std::vector<uint64_t> out;
  while (out.size() < count) {
    uint64_t v = lo + rng.below(n);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::string maps_line(uint64_t start, uint64_t limit, const std::string& perms, uint64_t offset,
                      uint64_t inode, const std::string& path) {
  // The kernel's layout: inode left-aligned in 11 columns, then the path.
  char buf[512];
  std::snprintf(buf, sizeof buf, "%08" PRIx64 "-%08" PRIx64 " %s %08" PRIx64 " 00:00 %-11" PRIu64
                " %s\n", start, limit, perms.c_str(), offset, inode, path.c_str());
  return buf;
}

}  // namespace

SyntheticProgram::SyntheticProgram(uint64_t seed, uint32_t function_count) {
  if (function_count < 2 * kFixedBottom)
    throw std::invalid_argument("SyntheticProgram: too few functions");
  Rng rng(seed ^ 0x5eed0f5e7e7a11ULL);

  // 1. Which module each function lives in, and its size (16-byte aligned, like -O2 code).
  functions_.resize(function_count);
  std::vector<uint64_t> sizes(function_count);
  const uint32_t free_functions = function_count - kFixedBottom;
  std::vector<uint32_t> module_of_index;
  for (uint32_t m = 0; m < std::size(kModules); ++m) {
    uint32_t n = free_functions * kModules[m].share / 100;
    if (m + 1 == std::size(kModules)) n = free_functions - uint32_t(module_of_index.size());
    module_of_index.insert(module_of_index.end(), n, m);
  }
  for (uint32_t i = 0; i < function_count; ++i) {
    Function& f = functions_[i];
    if (i == 1 || i == 2) f.module = kLibc;
    else if (i < kFixedBottom) f.module = 0;
    else f.module = module_of_index[i - kFixedBottom];
    sizes[i] = 16 * (6 + rng.below(96));
  }

  // 2. Lay out each module: a read-only ELF header page, the text, then rodata and data.
  uint64_t next_library = kLibraryBase;
  for (uint32_t m = 0; m < std::size(kModules); ++m) {
    Module mod{kModules[m].path, kModules[m].inode, {}};
    uint64_t base = m == 0 ? kExecutableBase : next_library;
    uint64_t text_start = base + 2 * kPage;
    uint64_t at = text_start;
    for (uint32_t i = 0; i < function_count; ++i) {
      if (functions_[i].module != m) continue;
      functions_[i].start = at;
      at += sizes[i];
    }
    uint64_t text_limit = round_up(at, kPage);
    uint64_t rodata_limit = text_limit + 16 * kPage;
    uint64_t data_limit = rodata_limit + 3 * kPage;
    mod.segments = {{base, text_start, 0, "r--p"},
                    {text_start, text_limit, text_start - base, "r-xp"},
                    {text_limit, rodata_limit, text_limit - base, "r--p"},
                    {rodata_limit, data_limit, rodata_limit - base, "rw-p"}};
    modules_.push_back(std::move(mod));
    if (m != 0) next_library = round_up(data_limit + 64 * kPage, 16 * kPage);
  }
  if (next_library + 4 * kPage > kVdso)
    throw std::invalid_argument("SyntheticProgram: too many functions for the address layout");

  // 3. Call sites and sample points. Return addresses are odd (call at a 16-byte boundary,
  // 5 bytes long) and sample PCs are 2 mod 4, so no leaf PC equals a return address or a
  // return address minus one.
  const uint64_t window = std::max<uint64_t>(8, free_functions / 32);
  for (uint32_t i = 0; i < function_count; ++i) {
    Function& f = functions_[i];
    const uint64_t slots = sizes[i] / 16;
    // main has several call sites, so that stacks differ right from the bottom.
    uint64_t sites = i < kFixedBottom - 1 ? 1 : i == kFixedBottom - 1 ? 4 : 1 + rng.below(4);
    for (uint64_t slot : distinct_draws(rng, 1, slots - 1, sites)) {
      uint32_t callee;
      if (i < kFixedBottom - 1) callee = i + 1;  // _start -> libc -> libc -> main
      // Recursion, never on the hot path: a hot self-call would trap every walk in it.
      else if (!f.call_sites.empty() && rng.chance(1, 40)) callee = i;
      // Now and then a call far away (into a library, or back from one); mostly a call to a
      // nearby function of the same module.
      else if (rng.chance(1, 8)) callee = kFixedBottom + uint32_t(rng.below(free_functions));
      else callee = kFixedBottom + uint32_t((i - kFixedBottom + 1 + rng.below(window)) %
                                            free_functions);
      f.call_sites.push_back({f.start + 16 * slot + 5, callee});
    }
    for (uint64_t word : distinct_draws(rng, 0, sizes[i] / 4, 1 + rng.below(8)))
      f.sample_pcs.push_back(f.start + 4 * word + 2);
  }
}

void SyntheticProgram::sample_stack(Rng& rng, unsigned depth, std::vector<uint64_t>& pcs) const {
  pcs.clear();
  uint32_t current = 0;
  for (unsigned frame = 1; frame < depth; ++frame) {
    const auto& sites = functions_[current].call_sites;
    // The first call site is the hot path; the others are taken now and then.
    size_t k = rng.chance(9, 10) ? 0 : rng.below(sites.size());
    pcs.push_back(sites[k].return_address);
    current = sites[k].callee;
  }
  const auto& leaf = functions_[current].sample_pcs;
  pcs.push_back(leaf[rng.chance(1, 2) ? 0 : rng.below(leaf.size())]);
  std::reverse(pcs.begin(), pcs.end());  // most recently called first
}

std::string SyntheticProgram::maps_text() const {
  std::string out;
  const std::string anonymous;
  for (size_t m = 0; m < modules_.size(); ++m) {
    const Module& mod = modules_[m];
    for (const Segment& s : mod.segments)
      out += maps_line(s.start, s.limit, s.perms, s.offset, mod.inode, mod.path);
    uint64_t end = mod.segments.back().limit;
    if (m == 0) out += maps_line(end + 0x1000000, end + 0x1021000, "rw-p", 0, 0, "[heap]");
    else out += maps_line(end, end + 2 * kPage, "rw-p", 0, 0, anonymous);
  }
  out += maps_line(kVdso - 4 * kPage, kVdso, "r--p", 0, 0, "[vvar]");
  out += maps_line(kVdso, kVdso + 2 * kPage, "r-xp", 0, 0, "[vdso]");
  out += maps_line(0x7ffddc4e9000, 0x7ffddc50a000, "rw-p", 0, 0, "[stack]");
  out += maps_line(0xffffffffff600000, 0xffffffffff601000, "--xp", 0, 0, "[vsyscall]");
  return out;
}

}  // namespace tally::bench
