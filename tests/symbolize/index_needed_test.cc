// ElfIndex given the only addresses it will be asked (`needed`, the daemon's pushes): when
// sized symbols hold them all it reads no PLT entries nor call-frame ranges, and any
// address it is asked then matches what the full index matches; an address in the PLT or
// in a function known by its FDE only makes it read those as the full index does.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "support/test_support.h"
#include "symbolize/elf_image.h"
#include "symbolize/elf_index.h"
#include "symbolize/find_binary.h"
#include "symbolize/plt_entries.h"
#include "symbolize/symbol_map.h"
#include "symbolize/symbolize_test_helpers.h"

namespace tally {
namespace {

using symbolize::ElfIndex;

// What match() says of `address`, as text: "name", "code@START" or "".
std::string matched(const ElfIndex& index, uint64_t address) {
  const ElfIndex::SymbolMatch match = index.match(address);
  if (match.symbol != nullptr) return index.name(*match.symbol);
  if (match.code_start != 0) return "code@" + std::to_string(match.code_start);
  return "";
}

// Addresses across the binary's code, every `step` bytes, split by what the full index
// says: held by a sized symbol of the file's tables (not a PLT entry) or not.
struct Addresses {
  std::vector<uint64_t> sized, other;
};
Addresses addresses_of(const ElfIndex& full, uint64_t from, uint64_t to, uint64_t step) {
  Addresses out;
  for (uint64_t a = from; a < to; a += step) {
    const ElfIndex::SymbolMatch match = full.match(a);
    const bool held = match.symbol != nullptr && match.symbol->size != 0 &&
                      a >= match.symbol->address && a < match.symbol->address + match.symbol->size &&
                      !std::string(full.name(*match.symbol)).ends_with("@plt");
    (held ? out.sized : out.other).push_back(a);
  }
  return out;
}

const char* const kBinary = "/usr/lib/x86_64-linux-gnu/liblzma.so.5";  // .dynsym only

TEST(IndexNeeded, SizedSymbolsAloneNameWhatTheyHold) {
  const symbolize::FoundBinary found = symbolize::find_binary(kBinary, "", {});
  TALLY_REQUIRE_PEER(found.found() ? found.binary : "", "liblzma5");
  const ElfIndex full(found, 1);
  const Addresses addresses = addresses_of(full, 0x3000, 0x30000, 0x101);
  ASSERT_GT(addresses.sized.size(), 10u);
  ASSERT_GT(addresses.other.size(), 10u);  // functions .dynsym does not name
  const ElfIndex needed(found, 1, 1, nullptr, &addresses.sized);
  EXPECT_EQ(needed.image_name(), full.image_name());
  for (uint64_t a : addresses.sized) EXPECT_EQ(matched(needed, a), matched(full, a)) << a;
  // No call-frame ranges were read: what only they name stays unnamed.
  size_t by_code_range = 0;
  for (uint64_t a : addresses.other) by_code_range += matched(full, a).starts_with("code@");
  ASSERT_GT(by_code_range, 0u);
  size_t unnamed = 0;
  for (uint64_t a : addresses.other) unnamed += matched(full, a).starts_with("code@") && matched(needed, a).empty();
  EXPECT_EQ(unnamed, by_code_range);
}

TEST(IndexNeeded, AnAddressNoSizedSymbolHoldsReadsTheRest) {
  const symbolize::FoundBinary found = symbolize::find_binary(kBinary, "", {});
  TALLY_REQUIRE_PEER(found.found() ? found.binary : "", "liblzma5");
  const ElfIndex full(found, 1);
  Addresses addresses = addresses_of(full, 0x3000, 0x30000, 0x101);
  auto image = symbolize::ElfImage::open(found.binary);
  ASSERT_NE(image, nullptr);
  const std::vector<symbolize::PltEntry> plt = symbolize::read_plt_entries(*image);
  ASSERT_FALSE(plt.empty());
  uint64_t in_fde_function = 0;
  for (uint64_t a : addresses.other)
    if (in_fde_function == 0 && matched(full, a).starts_with("code@")) in_fde_function = a;
  ASSERT_NE(in_fde_function, 0u);
  for (const auto& [wanted, what] : {std::pair{std::vector<uint64_t>{plt[0].address}, "a PLT entry"},
                                     std::pair{std::vector<uint64_t>{in_fde_function}, "an FDE's function"}}) {
    SCOPED_TRACE(what);
    std::vector<uint64_t> needed_addresses = addresses.sized;
    needed_addresses.insert(needed_addresses.end(), wanted.begin(), wanted.end());
    std::sort(needed_addresses.begin(), needed_addresses.end());
    const ElfIndex needed(found, 1, 1, nullptr, &needed_addresses);
    EXPECT_FALSE(matched(full, wanted.front()).empty());
    for (uint64_t a : needed_addresses) EXPECT_EQ(matched(needed, a), matched(full, a)) << a;
    for (uint64_t a : addresses.other) EXPECT_EQ(matched(needed, a), matched(full, a)) << a;
  }
  EXPECT_EQ(matched(full, plt[0].address), plt[0].name);
}

// libc with its debug file (libc6-dbg): DWARF, the debug file's .symtab and the binary's
// own .dynsym (which renames DWARF functions): the frames of addresses sized symbols hold
// are the full index's when the index keeps only the symbols nearest below them.
TEST(IndexNeeded, LibcFramesAreTheFullIndexs) {
  const char* const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  const symbolize::FoundBinary found = symbolize::find_binary(libc, "", {});
  TALLY_REQUIRE_PEER(found.debug, "libc6-dbg (libc's separate debug file)");
  const ElfIndex full(found, 1);
  const Addresses addresses = addresses_of(full, 0x28000, 0x190000, 0x777);
  ASSERT_GT(addresses.sized.size(), 100u);
  const ElfIndex needed(found, 1, 1, nullptr, &addresses.sized);
  for (uint64_t a : addresses.sized) {
    EXPECT_EQ(matched(needed, a), matched(full, a)) << a;
    const ElfIndex::Symbol* own = needed.own_symbol_for(a);
    const ElfIndex::Symbol* own_full = full.own_symbol_for(a);
    ASSERT_EQ(own == nullptr, own_full == nullptr) << a;
    if (own != nullptr) {
      EXPECT_STREQ(needed.name(*own), full.name(*own_full)) << a;
    }
  }
  auto with_all = symbolize::SymbolMap::open(found, 1);
  auto with_needed = symbolize::SymbolMap::open(found, 1, nullptr, &addresses.sized);
  ASSERT_TRUE(with_all && with_needed);
  const size_t with_lines = test::expect_same_frames(**with_all, **with_needed, addresses.sized);
  EXPECT_GT(with_lines, addresses.sized.size() / 2);  // DWARF lines, not symbols alone
}

// The frames of `addresses` through SymbolMap::resolve on `threads` threads, as
// "function|file|line" per frame, one string per address.
std::vector<std::string> resolved_frames(symbolize::SymbolMap& map, const std::vector<uint64_t>& addresses,
                                         unsigned threads) {
  map.resolve(addresses, threads);
  std::vector<std::string> out;
  for (size_t i = 0; i < addresses.size(); ++i) {
    std::string text;
    for (const symbolize::Frame& frame : map.frames(i))
      text += frame.function->name + "|" + frame.file + "|" + std::to_string(frame.line) + ";";
    out.push_back(text);
  }
  return out;
}

// VmHWM of this process in kB, after `reset` wrote 5 to clear_refs (which sets it to VmRSS).
long peak_rss_kb(bool reset) {
  if (reset) std::ofstream("/proc/self/clear_refs") << "5";
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
  return -1;
}

// The daemon's libc: the debug file read from its inflated copy with the addresses known
// (the resolvers then give libelf's pages of the copy back as they go, and walk libdw's
// unit headers a few at a time): the same frames as the full index inflated in memory,
// on one thread and on two, for a daemon's interval's worth of scattered addresses and for
// many; and the pages libdw touched are not all resident at once.
TEST(IndexNeeded, LibcFramesThroughTheCopyWithPagesGivenBackAreTheFullIndexs) {
  const char* const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  const symbolize::FoundBinary found = symbolize::find_binary(libc, "", {});
  TALLY_REQUIRE_PEER(found.debug, "libc6-dbg (libc's separate debug file)");
  test::TempDir dir;
  symbolize::InflatedCopies copies(dir.path());
  const ElfIndex full_index(found, 1);
  for (uint64_t step : {0x9a31u, 0x777u}) {
    SCOPED_TRACE(step);
    const Addresses addresses = addresses_of(full_index, 0x28000, 0x190000, step);
    ASSERT_GT(addresses.sized.size(), 30u);
    for (unsigned threads : {1u, 2u}) {
      SCOPED_TRACE(threads);
      auto full = symbolize::SymbolMap::open(found, 1);
      auto needed = symbolize::SymbolMap::open(found, threads, &copies, &addresses.sized);
      ASSERT_TRUE(full && needed);
      ASSERT_TRUE((*needed)->index().releases_dwarf_pages());
      EXPECT_FALSE((*full)->index().releases_dwarf_pages());
      const std::vector<std::string> expected = resolved_frames(**full, addresses.sized, threads);
      EXPECT_EQ(resolved_frames(**needed, addresses.sized, threads), expected);
      size_t with_lines = 0;
      for (const std::string& frames : expected) with_lines += frames.find("|0;") == std::string::npos;
      EXPECT_GT(with_lines, addresses.sized.size() / 2);  // DWARF lines, not symbols alone
      // lookup(), one resolver: the same.
      auto again = symbolize::SymbolMap::open(found, 1, &copies, &addresses.sized);
      ASSERT_TRUE(again);
      test::expect_same_frames(**full, **again, addresses.sized);
    }
  }
  // A daemon's interval: 40 addresses. Before, the walk to their units made most of the
  // copy's 8.7 MB resident (+11 MB of peak); now little more than the units read.
  const Addresses addresses = addresses_of(full_index, 0x28000, 0x190000, 0x9a31);
  const long before = peak_rss_kb(true);
  {
    auto needed = symbolize::SymbolMap::open(found, 1, &copies, &addresses.sized);
    ASSERT_TRUE(needed);
    (*needed)->resolve(addresses.sized, 1);
  }
  const long peak = peak_rss_kb(false);
  ASSERT_GT(before, 0);
#if !defined(__SANITIZE_ADDRESS__)  // (ASan's shadow and quarantine add their own megabytes)
  EXPECT_LT(peak - before, 6 * 1024) << "kB over " << before;
#else
  (void)peak;
#endif
}

// liblzma (.dynsym only, no DWARF): frames of an index given its addresses are the full one's.
TEST(IndexNeeded, LiblzmaFramesAreTheFullIndexs) {
  const symbolize::FoundBinary found = symbolize::find_binary(kBinary, "", {});
  TALLY_REQUIRE_PEER(found.found() ? found.binary : "", "liblzma5");
  const ElfIndex full_index(found, 1);
  const Addresses addresses = addresses_of(full_index, 0x3000, 0x30000, 0x101);
  test::TempDir dir;
  symbolize::InflatedCopies copies(dir.path());
  auto full = symbolize::SymbolMap::open(found, 1);
  auto needed = symbolize::SymbolMap::open(found, 1, &copies, &addresses.sized);
  ASSERT_TRUE(full && needed);
  const std::vector<std::string> expected = resolved_frames(**full, addresses.sized, 1);
  size_t named = 0;
  for (const std::string& frames : expected) named += !frames.empty();
  EXPECT_EQ(named, addresses.sized.size());
  EXPECT_EQ(resolved_frames(**needed, addresses.sized, 1), expected);
}

}  // namespace
}  // namespace tally
