// The daemon's push symbolizer kept across intervals: addresses in the fixture binary
// `deep` resolve to the functions pprof itself gave them (the fixture's pprof -raw), the
// second interval from the cache, and a cache past its bound starts again with the same
// names.
#include "daemon/push_symbolizer.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <map>
#include <sstream>

#include "store/image_profile.h"
#include "support/test_support.h"

namespace tally::daemon {
namespace {

// deep's file offsets -> function names, from pprof -raw of deep.pb.gz: the Locations of
// mapping 1 (address - start + offset of "1: START/LIMIT/OFFSET ../bin/deep").
std::map<uint32_t, std::string> names_pprof_gave() {
  const std::string raw = test::read_text(test::shared("fixtures/gperf/deep.pb.raw.txt"));
  uint64_t start = 0, offset = 0;
  std::map<uint64_t, std::string> by_address;
  bool locations = false, mappings = false;
  for (const std::string& line : test::text_lines(raw)) {
    if (line.starts_with("Locations")) locations = true;
    if (line.starts_with("Mappings")) mappings = true, locations = false;
    std::istringstream in(line);
    std::string id, address, mapping, name;
    if (locations && in >> id >> address >> mapping >> name && mapping == "M=1")
      by_address[std::stoull(address, nullptr, 16)] = name;
    if (mappings && line.starts_with("1: ")) {
      const std::string range = line.substr(3, line.find(' ', 3) - 3);
      start = std::stoull(range.substr(0, range.find('/')), nullptr, 16);
      offset = std::stoull(range.substr(range.rfind('/') + 1), nullptr, 16);
    }
  }
  std::map<uint32_t, std::string> out;
  for (const auto& [address, name] : by_address) out[uint32_t(address - start + offset)] = name;
  return out;
}

// One interval's profile of `deep`: one sample at each offset.
std::vector<PushInterval::ServiceProfile> interval(const std::map<uint32_t, std::string>& names) {
  std::vector<PushInterval::ServiceProfile> profiles(1);
  PushInterval::ServiceProfile& s = profiles[0];
  s.service = "deep";
  s.profile.sample_types = {s.profile.value_type("samples", "count")};
  store::ImageProfileBuilder builder(s.profile);
  for (const auto& [offset, name] : names) {
    const core::LocationId l =
        builder.location("image-deep", test::shared("fixtures/bin/deep"), "", offset);
    const int64_t one = 1;
    builder.add(std::span(&l, 1), std::span(&one, 1));
  }
  for (core::MappingId m = 1; m <= s.profile.mappings.size(); ++m)
    s.mapping_images.push_back(builder.image_of(m));
  return profiles;
}

// Each location's innermost function, by file offset.
std::map<uint32_t, std::string> names_given(const PushInterval::ServiceProfile& s) {
  std::map<uint32_t, std::string> out;
  const core::Profile& p = s.profile;
  for (const core::Location& l : p.locations) {
    const core::Mapping& m = p.mapping(l.mapping);
    out[uint32_t(l.address - m.start + m.offset)] =
        l.lines.empty() ? "" : std::string(p.str(p.function(l.lines[0].function).name));
  }
  return out;
}

TEST(PushSymbolizer, SecondIntervalComesFromTheCacheWithTheSameNames) {
  const auto expected = names_pprof_gave();
  ASSERT_GE(expected.size(), 5u);
  PushSymbolizer symbolizer({});
  core::Diagnostics diagnostics;
  auto first = interval(expected);
  symbolizer.symbolize(first, diagnostics);
  EXPECT_EQ(names_given(first[0]), expected);
  EXPECT_EQ(symbolizer.counters().misses, expected.size());
  EXPECT_EQ(symbolizer.counters().hits, 0u);

  auto second = interval(expected);
  symbolizer.symbolize(second, diagnostics);
  EXPECT_EQ(names_given(second[0]), expected);
  EXPECT_EQ(symbolizer.counters().hits, expected.size());
  EXPECT_EQ(symbolizer.counters().cached, expected.size());
  EXPECT_TRUE(second[0].profile.mapping(1).has_functions);
}

// A bound below one interval's entries: the cache starts again after each interval, which
// still gets its names.
TEST(PushSymbolizer, CachePastItsBoundStartsAgain) {
  const auto expected = names_pprof_gave();
  PushSymbolizer symbolizer({}, /*max_bytes=*/2);
  core::Diagnostics diagnostics;
  for (int round = 0; round < 3; ++round) {
    auto profiles = interval(expected);
    symbolizer.symbolize(profiles, diagnostics);
    EXPECT_EQ(names_given(profiles[0]), expected) << "round " << round;
  }
  EXPECT_EQ(symbolizer.counters().resets, 3u);
  EXPECT_EQ(symbolizer.counters().hits, 0u);
  EXPECT_EQ(symbolizer.counters().cached, 0u);
}

// `n` locations at distinct offsets of `deep` from `first` on, each with a sample.
std::vector<PushInterval::ServiceProfile> distinct_interval(uint32_t first, uint32_t n) {
  std::map<uint32_t, std::string> offsets;
  for (uint32_t i = 0; i < n; ++i) offsets[first + i] = "";
  return interval(offsets);
}

// Heap bytes in use, all arenas and mmapped blocks (glibc's count).
size_t heap_in_use() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// Interval after interval of addresses no earlier one had (a busy machine's new processes):
// the cache stays within its bound, by its own count and by the heap's. With the bound
// counted in addresses (100,000) the heap grew by the cache's ~400 bytes an address.
TEST(PushSymbolizer, CacheOfEverNewAddressesStaysWithinItsBytes) {
  constexpr size_t kMaxBytes = 512 * 1024;
  PushSymbolizer symbolizer({}, kMaxBytes);
  core::Diagnostics diagnostics;
  size_t before = 0;
  for (uint32_t round = 0; round < 40; ++round) {
    auto profiles = distinct_interval(0x1000 + round * 500, 500);
    symbolizer.symbolize(profiles, diagnostics);
    profiles = {};
    if (round == 0) before = heap_in_use() - symbolizer.counters().bytes;
    const PushSymbolizer::Counters c = symbolizer.counters();
    EXPECT_LE(c.bytes, kMaxBytes) << "round " << round;
    EXPECT_EQ(c.cached == 0, c.bytes < 4096) << "round " << round << ": " << c.bytes;
  }
  const PushSymbolizer::Counters c = symbolizer.counters();
  EXPECT_EQ(c.misses, 40u * 500);
  EXPECT_GE(c.resets, 3u);  // 20,000 addresses do not fit in 512 kB
#if !defined(__SANITIZE_ADDRESS__)  // (ASan's allocator keeps freed blocks in quarantine)
  // The cache's own count is the heap's: within a quarter (and what the test holds).
  const size_t grown = heap_in_use() - before;
  EXPECT_LT(grown, kMaxBytes + kMaxBytes / 4) << "bytes";
  EXPECT_LT(c.bytes, grown + kMaxBytes / 4) << "bytes";
#else
  (void)before;
#endif
}

}  // namespace
}  // namespace tally::daemon
