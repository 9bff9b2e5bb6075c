// sprofil(2)'s rules on the region table, with synthetic pcs: the overflow bin, the
// overlap rule, counters that stop at their maximum, atomic increments from many threads,
// and every invalid argument.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/sprofil_regions.h"

namespace tally::runtime {
namespace {

// An entry over `text_bytes` bytes of text at `offset` with one 16-bit counter per 2 bytes
// (scale 65536: "1-1" for 2-byte units).
prof region(uint16_t* counters, uint64_t offset, uint64_t text_bytes) {
  prof p{};
  p.pr_base = counters;
  p.pr_size = text_bytes;  // text_bytes / 2 counters of 2 bytes
  p.pr_off = offset;
  p.pr_scale = 65536;
  return p;
}

prof overflow_bin(void* counter, size_t size) {
  prof p{};
  p.pr_base = counter;
  p.pr_size = size;
  p.pr_off = 0;
  p.pr_scale = 2;
  return p;
}

RegionTablePtr build(const std::vector<prof>& entries, unsigned flags = PROF_USHORT) {
  RegionTablePtr table;
  int e = RegionTable::build(entries.data(), static_cast<int>(entries.size()), flags, table);
  EXPECT_EQ(e, 0);
  return table;
}

int build_error(const std::vector<prof>& entries, unsigned flags = PROF_USHORT) {
  RegionTablePtr table;
  return RegionTable::build(entries.data(), static_cast<int>(entries.size()), flags, table);
}

TEST(SprofilRegions, PcAtTheRegionStartCountsInCounterZero) {
  std::vector<uint16_t> a(0x80);
  auto table = build({region(a.data(), 0x10000, 0x100)});
  table->count(0x10000, 1);
  table->count(0x10001, 1);
  table->count(0x100fe, 1);
  EXPECT_EQ(a[0], 2);
  EXPECT_EQ(a[0x7f], 1);
}

TEST(SprofilRegions, OverflowBinCountsEveryPcOutsideTheRegions) {
  std::vector<uint16_t> a(0x80), b(0x80);
  uint16_t overflow = 0;
  auto table = build({region(a.data(), 0x10000, 0x100), region(b.data(), 0x30000, 0x100),
                      overflow_bin(&overflow, 2)});
  for (uint64_t pc : {0x0ull, 0xffffull, 0x10100ull, 0x2ffffull, 0x30100ull, ~0ull}) {
    EXPECT_EQ(table->locate(pc), (CounterSlot{2, 0})) << std::hex << pc;
    table->count(pc, 1);
  }
  table->count(0x10010, 1);
  table->count(0x30020, 3);
  EXPECT_EQ(overflow, 6);
  EXPECT_EQ(a[8], 1);
  EXPECT_EQ(b[0x10], 3);
}

TEST(SprofilRegions, WithoutAnOverflowBinPcsOutsideAreNotCounted) {
  std::vector<uint16_t> a(0x80);
  auto table = build({region(a.data(), 0x10000, 0x100)});
  table->count(0x20000, 1);
  table->count(0xfff, 1);
  EXPECT_EQ(table->locate(0x20000).entry, CounterSlot::kNone);
  for (uint16_t v : a) EXPECT_EQ(v, 0);
}

// "the pr_base associated with the largest offset less than the value of the program
// counter (pc) gets incremented": a region nested in another counts its own pcs, the outer
// one counts before and after it.
TEST(SprofilRegions, NestedRegionWinsInsideTheOuterOne) {
  std::vector<uint16_t> outer(0x800), inner(0x80);
  auto table = build({region(outer.data(), 0x1000, 0x1000), region(inner.data(), 0x1800, 0x100)});
  EXPECT_EQ(table->locate(0x1000), (CounterSlot{0, 0}));
  EXPECT_EQ(table->locate(0x17fe), (CounterSlot{0, 0x3ff}));
  EXPECT_EQ(table->locate(0x1800), (CounterSlot{1, 0}));
  EXPECT_EQ(table->locate(0x18fe), (CounterSlot{1, 0x7f}));
  EXPECT_EQ(table->locate(0x1900), (CounterSlot{0, 0x480}));
  EXPECT_EQ(table->locate(0x1ffe), (CounterSlot{0, 0x7ff}));
  EXPECT_EQ(table->locate(0x2000).entry, CounterSlot::kNone);
}

TEST(SprofilRegions, PartialOverlapGoesToTheLaterStart) {
  std::vector<uint16_t> e(0x200), f(0x300);
  // Listed in descending order: the array order does not matter, only the offsets.
  auto table = build({region(f.data(), 0x8200, 0x600), region(e.data(), 0x8000, 0x400)});
  EXPECT_EQ(table->locate(0x8100), (CounterSlot{1, 0x80}));
  EXPECT_EQ(table->locate(0x8200), (CounterSlot{0, 0}));
  EXPECT_EQ(table->locate(0x83fe), (CounterSlot{0, 0xff}));
  EXPECT_EQ(table->locate(0x8600), (CounterSlot{0, 0x200}));
}

// "If more than one text region has the same offset, the first one is chosen" (for the pcs
// both hold; past the shorter one's end, the longer one is the only region holding them).
TEST(SprofilRegions, SameOffsetGoesToTheFirstListed) {
  std::vector<uint16_t> short_one(0x80), long_one(0x200);
  auto first_short = build({region(short_one.data(), 0x5000, 0x100),
                            region(long_one.data(), 0x5000, 0x400)});
  EXPECT_EQ(first_short->locate(0x5010), (CounterSlot{0, 8}));
  EXPECT_EQ(first_short->locate(0x5200), (CounterSlot{1, 0x100}));
  auto first_long = build({region(long_one.data(), 0x5000, 0x400),
                           region(short_one.data(), 0x5000, 0x100)});
  EXPECT_EQ(first_long->locate(0x5010), (CounterSlot{0, 8}));
  EXPECT_EQ(first_long->locate(0x5200), (CounterSlot{0, 0x100}));
}

// "incremented, unless that would result in overflow".
TEST(SprofilRegions, CountersStopAtTheirMaximum) {
  uint16_t u16[4] = {65534, 65533, 0, 0};
  uint32_t u32[4] = {0xfffffffe, 0, 0, 0};
  uint64_t u64[4] = {~0ull - 1, 0, 0, 0};
  auto t16 = build({region(u16, 0x1000, sizeof u16)});
  t16->count(0x1000, 1);
  EXPECT_EQ(u16[0], 65535);
  t16->count(0x1000, 1);
  EXPECT_EQ(u16[0], 65535);
  t16->count(0x1002, 5);  // a weight larger than the room left
  EXPECT_EQ(u16[1], 65535);

  prof p32 = region(nullptr, 0x1000, sizeof u32);
  p32.pr_base = u32;
  p32.pr_scale = 65536 * 2;  // a 32-bit counter per 2 bytes
  auto t32 = build({p32}, PROF_UINT);
  t32->count(0x1000, 1);
  t32->count(0x1000, 1);
  EXPECT_EQ(u32[0], 0xffffffffu);

  prof p64 = p32;
  p64.pr_base = u64;
  p64.pr_size = sizeof u64;
  p64.pr_scale = 65536 * 4;
  auto t64 = build({p64}, PROF_UINT64);
  t64->count(0x1000, 7);
  EXPECT_EQ(u64[0], ~0ull);
}

TEST(SprofilRegions, ConcurrentIncrementsAreNotLost) {
  uint32_t u32[2] = {0, 0};
  prof p = region(nullptr, 0x1000, sizeof u32);
  p.pr_base = u32;
  p.pr_scale = 65536 * 2;
  auto t32 = build({p}, PROF_UINT);
  uint16_t u16[1] = {0};
  auto t16 = build({region(u16, 0x1000, sizeof u16)});
  constexpr int kThreads = 4, kEach = 100000;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&] {
      for (int n = 0; n < kEach; ++n) {
        t32->count(0x1000, 1);
        t16->count(0x1000, 1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(u32[0], uint32_t{kThreads * kEach});
  // 400000 increments stop at 65535 (wrapping would leave 400000 % 65536 = 6784).
  EXPECT_EQ(u16[0], 65535);
}

// ERRORS of sprofil(2), and tally's additions.
TEST(SprofilRegions, InvalidArguments) {
  uint64_t buf[4] = {};
  auto entry = [&](size_t size, uint64_t off, unsigned long scale) {
    prof p{};
    p.pr_base = buf;
    p.pr_size = size;
    p.pr_off = off;
    p.pr_scale = scale;
    return p;
  };
  const prof ok = entry(8, 0x1000, 65536);
  EXPECT_EQ(build_error({ok}), 0);
  // "The flags parameter is not valid": unknown bits, two counter sizes.
  EXPECT_EQ(build_error({ok}, 1u << 3), EINVAL);
  EXPECT_EQ(build_error({ok}, unsigned{PROF_UINT} | PROF_UINT64), EINVAL);
  EXPECT_EQ(build_error({ok}, PROF_FAST), 0);
  EXPECT_EQ(build_error({ok}, unsigned{PROF_UINT} | unsigned{PROF_FAST}), 0);
  // "a pr_size field is zero"
  EXPECT_EQ(build_error({entry(0, 0x1000, 65536)}), EINVAL);
  // "or is not a multiple of the element size"
  EXPECT_EQ(build_error({entry(3, 0x1000, 65536)}), EINVAL);
  EXPECT_EQ(build_error({entry(6, 0x1000, 65536)}, PROF_UINT), EINVAL);
  EXPECT_EQ(build_error({entry(12, 0x1000, 65536)}, PROF_UINT64), EINVAL);
  // "or greater than (2^46 * pr_scale) / 65536": 2^31 bytes at scale 2; no pr_scale 0.
  EXPECT_EQ(build_error({entry(size_t{1} << 31, 0x1000, 2)}), 0);
  EXPECT_EQ(build_error({entry((size_t{1} << 31) + 2, 0x1000, 2)}), EINVAL);
  EXPECT_EQ(build_error({entry(8, 0x1000, 0)}), EINVAL);
  // "the overflow descriptor is not last in the list of specified regions"
  EXPECT_EQ(build_error({entry(2, 0, 2), ok}), EINVAL);
  EXPECT_EQ(build_error({entry(2, 0, 2), entry(2, 0, 2)}), EINVAL);
  EXPECT_EQ(build_error({ok, entry(2, 0, 2)}), 0);
  // "or is more than one element long"
  EXPECT_EQ(build_error({ok, entry(4, 0, 2)}), EINVAL);
  EXPECT_EQ(build_error({ok, entry(4, 0, 2)}, PROF_UINT), 0);
  // tally: less than one byte of text per counter (the spec leaves it undefined).
  EXPECT_EQ(build_error({entry(8, 0x1000, 131072)}), 0);
  EXPECT_EQ(build_error({entry(8, 0x1000, 131073)}), EINVAL);
  EXPECT_EQ(build_error({entry(8, 0x1000, 524288)}, PROF_UINT64), 0);
  // tally: counters must be aligned for atomic increments; a NULL buffer is a bad address.
  prof misaligned = ok;
  misaligned.pr_base = reinterpret_cast<char*>(buf) + 1;
  EXPECT_EQ(build_error({misaligned}), EINVAL);
  prof null_base = ok;
  null_base.pr_base = nullptr;
  EXPECT_EQ(build_error({null_base}), EFAULT);
  // [E2BIG] "profcnt was less than or equal to 0, or greater than sysconf(_SC_PROFIL_MAX)"
  // (0 disables profiling: that is tally_sprofil's, tested with the C API).
  RegionTablePtr table;
  EXPECT_EQ(RegionTable::build(&ok, -1, PROF_USHORT, table), E2BIG);
  EXPECT_EQ(RegionTable::build(&ok, TALLY_PROFIL_MAX + 1, PROF_USHORT, table), E2BIG);
  // Not errors here: unsorted and overlapping regions (the overlap rule decides).
  EXPECT_EQ(build_error({entry(8, 0x2000, 65536), entry(8, 0x1000, 65536)}), 0);
  EXPECT_EQ(build_error({entry(32, 0x1000, 65536), entry(8, 0x1008, 65536)}), 0);
}

TEST(SprofilRegions, ProfilEntryAtOffsetZeroScaleTwoIsARegion) {
  uint16_t counters[4] = {};
  prof p{};
  p.pr_base = counters;
  p.pr_size = sizeof counters;
  p.pr_off = 0;
  p.pr_scale = 2;
  RegionTablePtr table;
  ASSERT_EQ(RegionTable::build(&p, 1, PROF_USHORT, table, RegionTable::Entries::profil), 0);
  // One counter per 65536 bytes from address 0.
  EXPECT_EQ(table->locate(3 * 65536 + 5), (CounterSlot{0, 3}));
  EXPECT_EQ(table->locate(4 * 65536).entry, CounterSlot::kNone);
}

// Many regions, many pcs: the table agrees with a direct reading of the overlap rule.
TEST(SprofilRegions, AgreesWithTheOverlapRuleOnRandomRegions) {
  uint64_t seed = 12345;
  auto next = [&] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return seed >> 33;
  };
  constexpr int kRegions = 300;
  std::vector<std::vector<uint16_t>> buffers(kRegions);
  std::vector<prof> entries;
  for (int i = 0; i < kRegions; ++i) {
    const uint64_t counters = 1 + next() % 64;
    buffers[i].resize(counters);
    prof p{};
    p.pr_base = buffers[i].data();
    p.pr_size = counters * 2;
    p.pr_off = 0x100000 + (next() % 4096) * 16;
    p.pr_scale = 2 + next() % 65535;
    entries.push_back(p);
  }
  auto table = build(entries);
  for (int n = 0; n < 20000; ++n) {
    const uint64_t pc = 0x100000 + next() % 0x40000;
    CounterSlot expected;
    uint64_t best_offset = 0;
    for (int i = 0; i < kRegions; ++i) {
      const prof& p = entries[i];
      if (pc < p.pr_off) continue;
      // In region i: its counter index is below its counter count.
      __extension__ typedef unsigned __int128 u128;
      const uint64_t index = static_cast<uint64_t>(
          (static_cast<u128>(pc - p.pr_off) * p.pr_scale) / (2 * 65536));
      if (index >= p.pr_size / 2) continue;
      if (expected.entry == CounterSlot::kNone || p.pr_off > best_offset) {
        expected = {i, index};
        best_offset = p.pr_off;
      }
    }
    ASSERT_EQ(table->locate(pc), expected) << std::hex << "pc 0x" << pc;
  }
}

}  // namespace
}  // namespace tally::runtime
