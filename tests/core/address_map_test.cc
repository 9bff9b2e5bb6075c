// core::AddressMap: uint64 -> uint32 open-addressing map; compared with std::unordered_map.
#include "core/address_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <unordered_map>

namespace tally::core {
namespace {

TEST(AddressMap, EmptyMapFindsNothing) {
  AddressMap m;
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.find(0), 0u);
  EXPECT_EQ(m.find(0x401000), 0u);
}

TEST(AddressMap, FirstInsertStoresLaterOnesReturnTheStoredValue) {
  AddressMap m;
  bool inserted = false;
  EXPECT_EQ(m.find_or_insert(0x401000, 1, inserted), 1u);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(m.find_or_insert(0x401000, 2, inserted), 1u);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(m.find_or_insert(0x401001, 2, inserted), 2u);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.find(0x401000), 1u);
  EXPECT_EQ(m.find(0x401001), 2u);
  EXPECT_EQ(m.find(0x401002), 0u);
}

TEST(AddressMap, ZeroAndAllOnesAreOrdinaryKeys) {
  AddressMap m;
  bool inserted = false;
  m.find_or_insert(0, 7, inserted);
  EXPECT_TRUE(inserted);
  m.find_or_insert(std::numeric_limits<uint64_t>::max(), 9, inserted);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(m.find(0), 7u);
  EXPECT_EQ(m.find(std::numeric_limits<uint64_t>::max()), 9u);
  EXPECT_EQ(m.size(), 2u);
}

TEST(AddressMap, GrowsPastManyThousandsOfKeys) {
  AddressMap m;
  constexpr uint32_t kCount = 200000;
  bool inserted = false;
  // Addresses 16 bytes apart, as instruction addresses often are.
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(m.find_or_insert(0x400000 + uint64_t(i) * 16, i + 1, inserted), i + 1);
    ASSERT_TRUE(inserted);
  }
  EXPECT_EQ(m.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(m.find(0x400000 + uint64_t(i) * 16), i + 1) << i;
    ASSERT_EQ(m.find(0x400000 + uint64_t(i) * 16 + 8), 0u) << i;
  }
  EXPECT_EQ(m.find_or_insert(0x400000, 12345, inserted), 1u);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(m.size(), kCount);
}

TEST(AddressMap, AgreesWithUnorderedMapOnRandomKeys) {
  std::mt19937_64 rng(7);
  AddressMap m;
  std::unordered_map<uint64_t, uint32_t> reference;
  for (int i = 0; i < 300000; ++i) {
    // Half the keys from a small range (many repeats), half anywhere (mostly new).
    uint64_t key = (i % 2 == 0) ? rng() % 50000 : rng();
    if (rng() % 4 == 0) {
      uint32_t expected = 0;
      if (auto it = reference.find(key); it != reference.end()) expected = it->second;
      ASSERT_EQ(m.find(key), expected) << key;
      continue;
    }
    auto next_id = static_cast<uint32_t>(reference.size() + 1);
    bool inserted = false;
    uint32_t got = m.find_or_insert(key, next_id, inserted);
    auto [it, fresh] = reference.try_emplace(key, next_id);
    ASSERT_EQ(inserted, fresh) << key;
    ASSERT_EQ(got, it->second) << key;
  }
  EXPECT_EQ(m.size(), reference.size());
  for (const auto& [key, value] : reference) ASSERT_EQ(m.find(key), value) << key;
}

}  // namespace
}  // namespace tally::core
