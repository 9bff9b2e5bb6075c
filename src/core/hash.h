// Small, fast, non-cryptographic hashing for the hot loops (stack interning, address
// lookup). Deterministic across runs: nothing here depends on addresses or seeds.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace tally::core {

inline uint64_t mix64(uint64_t x) {
  // splitmix64 finaliser: every input bit affects every output bit.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// A stack of 32-bit ids, two per multiply: the per-frame cost of hashing a million deep
// stacks is what merging samples spends most of its time on. mix64 at the end spreads the
// bits for the table index.
inline uint64_t hash_ids(std::span<const uint32_t> ids) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ ids.size();
  size_t i = 0;
  for (; i + 2 <= ids.size(); i += 2) {
    h = (h ^ (uint64_t(ids[i]) | uint64_t(ids[i + 1]) << 32)) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  if (i < ids.size()) h = (h ^ ids[i]) * 0xff51afd7ed558ccdULL;
  return mix64(h);
}

// FNV-1a, 64-bit: a stable, documented hash for identifiers written to files (DCPI image
// ids of images without a build id), which must not change between tally versions.
inline uint64_t fnv1a64(std::string_view s, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

}  // namespace tally::core
