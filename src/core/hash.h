// Small, fast, non-cryptographic hashing for the hot loops (stack interning, address
// lookup). Deterministic across runs: nothing here depends on addresses or seeds.
#pragma once

#include <cstdint>
#include <span>

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

template <class T>
uint64_t hash_words(std::span<const T> words, uint64_t seed = 0x9e3779b97f4a7c15ULL) {
  uint64_t h = seed ^ (words.size() * 0x100000001b3ULL);
  for (T w : words) h = mix64(h ^ static_cast<uint64_t>(w)) + 0x9e3779b97f4a7c15ULL;
  return h;
}

}  // namespace tally::core
