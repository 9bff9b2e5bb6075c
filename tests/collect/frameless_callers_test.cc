// FramelessCallers: the callers of a frameless leaf found with CFI in a few words at the
// stack pointer (what the BPF off-CPU recorder copies), checked against the DWARF
// unwinder's chain of the same sample (unwind_fixture: a library without frame pointers,
// calling through libc's qsort), and the splice into a frame-pointer walk.
#include "collect/frameless_callers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "collect/dwarf_unwind.h"
#include "unwind_test_support.h"

namespace tally::collect {
namespace {

using test::OwnSample;
using test::take_sample;
using test::own_maps;
using test::sample_without_cfi;

__attribute__((noinline)) OwnSample sample_through_qsort() {
  OwnSample own = take_sample([](UfSample* s) { uf_run(s, 3); });
  asm volatile("" ::: "memory");
  return own;
}

// The first `count` words of the sample's stack copy (all of them: SIZE_MAX).
std::vector<uint64_t> words_of(const OwnSample& own, size_t count) {
  std::vector<uint64_t> words(std::min(count, own.stack.size() / 8));
  std::memcpy(words.data(), own.stack.data(), words.size() * 8);
  return words;
}

std::vector<uint64_t> dwarf_chain(const OwnSample& own) {
  DwarfUnwinder unwinder;
  std::vector<uint64_t> pcs;
  unwinder.unwind(getpid(), own_maps(), own.regs, own.stack, pcs);
  return pcs;
}

std::vector<uint64_t> recover(const OwnSample& own, const std::vector<uint64_t>& words) {
  FramelessCallers frameless;
  std::vector<uint64_t> callers;
  frameless.recover(getpid(), own_maps(), own.regs.ip(), words, callers);
  return callers;
}

// The recovered callers are the DWARF chain's frames after the leaf, as far as they go.
void expect_prefix_of_chain(const std::vector<uint64_t>& callers, const std::vector<uint64_t>& chain) {
  ASSERT_LE(callers.size() + 1, chain.size());
  for (size_t i = 0; i < callers.size(); ++i) EXPECT_EQ(callers[i], chain[i + 1]) << "caller " << i;
}

TEST(FramelessCallers, WholeStackGivesTheFramelessCallersInOrder) {
  OwnSample own = sample_through_qsort();
  const std::vector<uint64_t> chain = dwarf_chain(own);
  test::Symbols symbols(own_maps());
  const std::vector<test::Place> places = symbols.chain(chain);
  const std::vector<uint64_t> callers = recover(own, words_of(own, SIZE_MAX));
  // uf_leaf's caller uf_compare and libc's sort functions above it keep no frame pointer
  // (glibc 2.36's qsort_r does: its CFA is rbp-based, where the recovery may stop).
  ASSERT_GE(callers.size(), 2u) << test::describe(places);
  EXPECT_EQ(places[1].function, "uf_compare") << test::describe(places);
  // libc's qsort, or under ASan its interceptor's comparator wrapper.
  const std::string third = test::basename_of(places[2].file);
  EXPECT_TRUE(third == "libc.so.6" || third.starts_with("libasan")) << test::describe(places);
  expect_prefix_of_chain(callers, chain);
}

TEST(FramelessCallers, SixteenWordsGiveTheCallersWhoseReturnAddressesTheyHold) {
  OwnSample own = sample_through_qsort();
  const std::vector<uint64_t> chain = dwarf_chain(own);
  const std::vector<uint64_t> all = recover(own, words_of(own, SIZE_MAX));
  const std::vector<uint64_t> callers = recover(own, words_of(own, 16));
  ASSERT_GE(callers.size(), 1u);
  EXPECT_LE(callers.size(), all.size());
  expect_prefix_of_chain(callers, chain);
  // Each recovered return address is one of the 16 words.
  const std::vector<uint64_t> words = words_of(own, 16);
  for (uint64_t caller : callers) EXPECT_NE(std::find(words.begin(), words.end(), caller), words.end());
}

TEST(FramelessCallers, StopsAtCodeWithoutCfi) {
  OwnSample own = sample_without_cfi();
  const std::vector<uint64_t> chain = dwarf_chain(own);
  ASSERT_GE(chain.size(), 3u);
  // uf_leaf's caller, uf_nocfi_middle, has no CFI: its return address is the last one.
  EXPECT_EQ(recover(own, words_of(own, SIZE_MAX)), std::vector<uint64_t>{chain[1]});
}

TEST(FramelessCallers, NoWordsOrUnknownLeafGiveNothing) {
  OwnSample own = sample_through_qsort();
  EXPECT_TRUE(recover(own, {}).empty());
  FramelessCallers frameless;
  std::vector<uint64_t> callers;
  const std::vector<uint64_t> words = words_of(own, 16);
  frameless.recover(getpid(), own_maps(), 0x10, words, callers);  // no mapping
  EXPECT_TRUE(callers.empty());
}

TEST(FramelessCallers, GarbageWordsStayWithinTheCopy) {
  std::mt19937_64 random(7);
  FramelessCallers frameless;
  const auto leaf = reinterpret_cast<uint64_t>(&uf_leaf);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint64_t> words(16);
    for (uint64_t& word : words) word = round % 2 ? random() : leaf + random() % 4096;
    std::vector<uint64_t> callers;
    frameless.recover(getpid(), own_maps(), leaf + random() % 64, words, callers);
    EXPECT_LE(callers.size(), words.size());
  }
}

TEST(FramelessCallers, SpliceAddsTheCallersAfterTheLeafWithoutDoubling) {
  std::vector<uint64_t> out;
  auto splice = [&](std::vector<uint64_t> walked, std::vector<uint64_t> callers) {
    out.clear();
    FramelessCallers::splice(walked, callers, out);
  };
  // The walk: leaf L, then A (the caller of the frameless leaf's caller), B.
  splice(std::vector<uint64_t>{1, 10, 11}, std::vector<uint64_t>{5, 6});
  EXPECT_EQ(out, (std::vector<uint64_t>{1, 5, 6, 10, 11}));
  // A recovered caller the walk has as its second frame ends the recovered ones.
  splice(std::vector<uint64_t>{1, 10, 11}, std::vector<uint64_t>{5, 10, 11, 12});
  EXPECT_EQ(out, (std::vector<uint64_t>{1, 5, 10, 11}));
  splice(std::vector<uint64_t>{1, 10}, std::vector<uint64_t>{});
  EXPECT_EQ(out, (std::vector<uint64_t>{1, 10}));
  splice(std::vector<uint64_t>{1}, std::vector<uint64_t>{5});
  EXPECT_EQ(out, (std::vector<uint64_t>{1, 5}));
  splice(std::vector<uint64_t>{}, std::vector<uint64_t>{5});
  EXPECT_TRUE(out.empty());
  // Appended to what is there (the kernel frames).
  out = {99};
  FramelessCallers::splice(std::vector<uint64_t>{1, 10}, std::vector<uint64_t>{5}, out);
  EXPECT_EQ(out, (std::vector<uint64_t>{99, 1, 5, 10}));
}

}  // namespace
}  // namespace tally::collect
