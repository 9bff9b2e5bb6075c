// sprofil(2)'s two tables of "instructions that map into each element of the array",
// typed from ../shared/specs/sprofil.2.txt, against what tally's region table does: every
// entry is derived by feeding the pcs of consecutive instructions (4-byte PA-RISC
// instructions, 16-byte Itanium bundles) into the counting function and watching which
// counters they land in.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/sprofil_regions.h"

namespace tally::runtime {
namespace {

struct Row {
  unsigned long scale;
  double ushort_ratio, uint_ratio, uint64_ratio;
};

// "On PA-RISC machines, instructions are 4 bytes each."
constexpr Row kPaRisc[] = {
    {2, 16384, 32768, 65536}, {4, 8192, 16384, 32768}, {8, 4096, 8192, 16384},
    {16, 2048, 4096, 8192},   {32, 1024, 2048, 4096},  {64, 512, 1024, 2048},
    {128, 256, 512, 1024},    {256, 128, 256, 512},    {512, 64, 128, 256},
    {1024, 32, 64, 128},      {2048, 16, 32, 64},      {4096, 8, 16, 32},
    {8192, 4, 8, 16},         {16384, 2, 4, 8},        {32768, 1, 2, 4},
    {65536, 0.5, 1, 2},       {131072, 0.25, 0.5, 1},
};

// "On Itanium-based machines, pc points to a 16-byte bundle containing three instructions."
constexpr Row kItanium[] = {
    {2, 4096, 8192, 16384}, {4, 2048, 4096, 8192}, {8, 1024, 2048, 4096},
    {16, 512, 1024, 2048},  {32, 256, 512, 1024},  {64, 128, 256, 512},
    {128, 64, 128, 256},    {256, 32, 64, 128},    {512, 16, 32, 64},
    {1024, 8, 16, 32},      {2048, 4, 8, 16},      {4096, 2, 4, 8},
    {8192, 1, 2, 4},        {16384, 0.5, 1, 2},    {32768, 0.25, 0.5, 1},
};

// The counters of one region, read as 64-bit values whatever their size.
class Counters {
 public:
  Counters(unsigned size, size_t count) : size_(size), bytes_(size * count, 0) {}
  void* base() { return bytes_.data(); }
  size_t bytes() const { return bytes_.size(); }
  uint64_t at(size_t i) const {
    uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + i * size_, size_);  // little-endian
    return v;
  }
  size_t count() const { return bytes_.size() / size_; }

 private:
  unsigned size_;
  std::vector<uint8_t> bytes_;  // 8-byte aligned by the allocator
};

struct Derived {
  double ratio = 0;  // instructions per counter
  bool uniform = false;
};

// Feeds instructions 0, 1, 2, ... of a region until one lands past counter 0: m of them
// landed in counter 0, and the next one in counter j. Either several instructions share a
// counter (m > 1, and then the next counter, j = 1, holds the next ones) or each has its
// own (m = 1, j counters apart): m / j instructions per counter. Two instructions in one
// counter and then an empty one is neither. Then two more groups of m instructions must
// land in counters j and 2j, m each, and nowhere else.
Derived derive(unsigned instruction_size, unsigned long scale, unsigned flags,
               unsigned counter_size) {
  constexpr uint64_t kBase = 0x40000000;
  Counters counters(counter_size, 64);
  prof region{};
  region.pr_base = counters.base();
  region.pr_size = counters.bytes();
  region.pr_off = kBase;
  region.pr_scale = scale;
  RegionTablePtr table;
  EXPECT_EQ(RegionTable::build(&region, 1, flags, table), 0);
  if (!table) return {};
  auto first_nonzero_after_0 = [&]() -> size_t {
    for (size_t i = 1; i < counters.count(); ++i)
      if (counters.at(i) != 0) return i;
    return 0;
  };
  uint64_t fed = 0;
  size_t j = 0;
  while (j == 0 && fed < (uint64_t{1} << 20)) {
    table->count(kBase + fed * instruction_size, 1);
    ++fed;
    j = first_nonzero_after_0();
  }
  const uint64_t m = counters.at(0);
  Derived d;
  d.ratio = static_cast<double>(m) / static_cast<double>(j);
  for (; fed < 3 * m; ++fed) table->count(kBase + fed * instruction_size, 1);
  d.uniform = (m == 1 || j == 1) && counters.at(j) == m && 2 * j < counters.count() &&
              counters.at(2 * j) == m;
  for (size_t i = 0; i < counters.count(); ++i)
    if (i != 0 && i != j && i != 2 * j && counters.at(i) != 0) d.uniform = false;
  return d;
}

void check_table(const Row* rows, size_t n, unsigned instruction_size) {
  for (size_t r = 0; r < n; ++r) {
    const Row& row = rows[r];
    SCOPED_TRACE("scale " + std::to_string(row.scale));
    struct Column {
      const char* name;
      unsigned flags, size;
      double expected;
    } columns[] = {{"PROF_USHORT", PROF_USHORT, 2, row.ushort_ratio},
                   {"PROF_UINT", PROF_UINT, 4, row.uint_ratio},
                   {"PROF_UINT64", PROF_UINT64, 8, row.uint64_ratio}};
    for (const Column& c : columns) {
      Derived d = derive(instruction_size, row.scale, c.flags, c.size);
      EXPECT_EQ(d.ratio, c.expected) << c.name;
      EXPECT_TRUE(d.uniform) << c.name << ": the counters after the first do not hold the "
                             << "same number of instructions";
    }
  }
}

TEST(SprofilScaleTables, PaRiscInstructionsPerCounterAsTheSpecTable) {
  check_table(kPaRisc, std::size(kPaRisc), 4);
}

TEST(SprofilScaleTables, ItaniumBundlesPerCounterAsTheSpecTable) {
  check_table(kItanium, std::size(kItanium), 16);
}

// The scale is applied to the byte offset, not to the offset in counter-size units as
// glibc does ((pc - off) / size * scale / 65536): with 64-bit counters and scale 131072,
// 4-byte instructions get a counter each (the table's last PA-RISC row), where glibc's
// truncation would put instructions 0 and 1 both in counter 0 and leave counter 1 empty.
TEST(SprofilScaleTables, ScaleAppliesToBytesNotToCounterUnits) {
  EXPECT_EQ(counter_index(4, 131072, 19), 1u);
  EXPECT_EQ(counter_index(7, 131072, 19), 1u);
  EXPECT_EQ(counter_index(8, 131072, 19), 2u);
  // A scale that is no power of two: 131072 / 3 bytes (43690.67) per 16-bit counter.
  EXPECT_EQ(counter_index(43690, 3, 17), 0u);
  EXPECT_EQ(counter_index(43691, 3, 17), 1u);
}

// A region ends where its last counter's bytes end, rounded up: with 2 counters of
// 43690.67 bytes, the last pc inside is pr_off + 87381.
TEST(SprofilScaleTables, RegionEndsAfterItsLastCountersBytes) {
  uint16_t counters[2] = {0, 0};
  prof region{};
  region.pr_base = counters;
  region.pr_size = sizeof counters;
  region.pr_off = 0x100000;
  region.pr_scale = 3;
  RegionTablePtr table;
  ASSERT_EQ(RegionTable::build(&region, 1, PROF_USHORT, table), 0);
  EXPECT_EQ(table->locate(0x100000 + 87381), (CounterSlot{0, 1}));
  EXPECT_EQ(table->locate(0x100000 + 87382).entry, CounterSlot::kNone);
  EXPECT_EQ(table->locate(0x100000 - 1).entry, CounterSlot::kNone);
}

}  // namespace
}  // namespace tally::runtime
