// The DWARF unwinder on samples the test program takes of itself (unwind_fixture: a
// library without frame pointers, calling through libc's qsort, a tail call, a signal
// frame, a function without CFI), checked against the chain the code must have.
#include "collect/dwarf_unwind.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <random>

#include <gelf.h>

#include "symbolize/elf_image.h"
#include "support/test_support.h"
#include "unwind_test_support.h"

namespace tally::collect {
namespace {

using test::OwnSample;
using test::Place;
using test::take_sample;
using test::own_maps;
using test::sample_without_cfi;

constexpr int kDepth = 3;

// The test's own frames, kept out of line so that they show in the chains.
__attribute__((noinline)) OwnSample sample_through_qsort(size_t capacity = 256 * 1024) {
  OwnSample own = take_sample([](UfSample* s) { uf_run(s, kDepth); }, capacity);
  asm volatile("" ::: "memory");
  return own;
}

__attribute__((noinline)) OwnSample sample_in_signal_handler() {
  struct sigaction action {}, previous{};
  action.sa_sigaction = reinterpret_cast<void (*)(int, siginfo_t*, void*)>(&uf_on_trap);
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTRAP, &action, &previous);
  OwnSample own = take_sample([](UfSample* s) { uf_run_trap(s); });
  sigaction(SIGTRAP, &previous, nullptr);
  asm volatile("" ::: "memory");
  return own;
}

bool in_libc(const Place& place) { return test::basename_of(place.file) == "libc.so.6"; }
// qsort is libc's, or the sanitizer runtime's interceptor in front of libc's.
bool in_qsort(const Place& place) {
  return in_libc(place) || test::basename_of(place.file).starts_with("libasan");
}
bool named(const Place& place, const std::string& name) { return place.function == name; }
bool contains(const Place& place, const std::string& text) {
  return place.function.find(text) != std::string::npos;
}

std::vector<uint64_t> unwind(DwarfUnwinder& unwinder, const OwnSample& own,
                             size_t max_frames = 512) {
  std::vector<uint64_t> pcs;
  unwinder.unwind(getpid(), own_maps(), own.regs, own.stack, pcs, max_frames);
  return pcs;
}

struct Unwound {
  std::vector<uint64_t> pcs;
  std::vector<Place> chain;  // pcs symbolized
};

Unwound unwind_and_symbolize(DwarfUnwinder& unwinder, const OwnSample& own) {
  Unwound unwound;
  unwound.pcs = unwind(unwinder, own);
  test::Symbols symbols(own_maps());
  unwound.chain = symbols.chain(unwound.pcs);
  return unwound;
}

// Whether the chain, from `from` on, holds a frame of the test's function `name`.
bool has_test_frame(const std::vector<Place>& chain, size_t from, const std::string& name) {
  for (size_t i = from; i < chain.size(); ++i)
    if (contains(chain[i], name)) return true;
  return false;
}

// main <- __libc_start_call_main <- __libc_start_main <- _start: where every chain of the
// main thread ends when the stack copy holds it all.
void expect_reaches_start(const std::vector<Place>& chain) {
  ASSERT_GE(chain.size(), 4u);
  size_t n = chain.size();
  EXPECT_TRUE(named(chain[n - 1], "_start")) << test::describe(chain);
  EXPECT_TRUE(in_libc(chain[n - 2])) << test::describe(chain);
  EXPECT_TRUE(in_libc(chain[n - 3])) << test::describe(chain);
  EXPECT_TRUE(named(chain[n - 4], "main")) << test::describe(chain);
}

TEST(DwarfUnwind, ThroughLibcQsortTailCallAndFramelessLeaf) {
  OwnSample own = sample_through_qsort();
  DwarfUnwinder unwinder;
  auto [pcs, chain] = unwind_and_symbolize(unwinder, own);
  ASSERT_GE(chain.size(), 10u) << test::describe(chain);
  EXPECT_EQ(pcs[0], own.regs.ip());
  size_t i = 0;
  EXPECT_TRUE(named(chain[i++], "uf_leaf")) << test::describe(chain);
  // uf_tail jumped to uf_leaf: its caller's frame is next.
  EXPECT_TRUE(named(chain[i++], "uf_compare")) << test::describe(chain);
  size_t libc_frames = 0;
  while (i < chain.size() && in_qsort(chain[i])) ++i, ++libc_frames;
  EXPECT_GE(libc_frames, 1u) << test::describe(chain);  // qsort_r, msort_with_tmp...
  ASSERT_LT(i + kDepth + 3, chain.size()) << test::describe(chain);
  EXPECT_TRUE(named(chain[i++], "uf_sort")) << test::describe(chain);
  for (int level = 0; level <= kDepth; ++level)
    EXPECT_TRUE(named(chain[i++], "uf_recurse")) << test::describe(chain);
  EXPECT_TRUE(named(chain[i++], "uf_run")) << test::describe(chain);
  // take_sample's lambda and take_sample itself may be inlined; sample_through_qsort not.
  EXPECT_TRUE(has_test_frame(chain, i, "sample_through_qsort")) << test::describe(chain);
  expect_reaches_start(chain);

  const UnwindStats& stats = unwinder.stats();
  EXPECT_EQ(stats.samples, 1u);
  EXPECT_EQ(stats.frames, pcs.size());
  EXPECT_EQ(stats.truncated, 0u);
  EXPECT_EQ(stats.frame_pointer_steps, 0u);
}

TEST(DwarfUnwind, AcrossSignalFrameIntoInterruptedFramelessFunction) {
  OwnSample own = sample_in_signal_handler();
  DwarfUnwinder unwinder;
  auto [pcs, chain] = unwind_and_symbolize(unwinder, own);
  ASSERT_GE(chain.size(), 6u) << test::describe(chain);
  EXPECT_TRUE(named(chain[0], "uf_leaf")) << test::describe(chain);
  EXPECT_TRUE(named(chain[1], "uf_on_trap")) << test::describe(chain);
  EXPECT_TRUE(in_libc(chain[2])) << test::describe(chain);  // __restore_rt, the sigreturn trampoline
  // The interrupted instruction itself (the one after int3), not a return address.
  EXPECT_EQ(pcs[3], reinterpret_cast<uint64_t>(&uf_trap_point) + 1) << test::describe(chain);
  EXPECT_TRUE(named(chain[3], "uf_trap_point")) << test::describe(chain);
  EXPECT_TRUE(named(chain[4], "uf_run_trap")) << test::describe(chain);
  EXPECT_TRUE(has_test_frame(chain, 5, "sample_in_signal_handler")) << test::describe(chain);
  expect_reaches_start(chain);
  EXPECT_EQ(unwinder.stats().truncated, 0u);
}

TEST(DwarfUnwind, FollowsFramePointerWhereThereIsNoCfi) {
  OwnSample own = sample_without_cfi();
  DwarfUnwinder unwinder;
  auto chain = unwind_and_symbolize(unwinder, own).chain;
  ASSERT_GE(chain.size(), 4u) << test::describe(chain);
  EXPECT_TRUE(named(chain[0], "uf_leaf")) << test::describe(chain);
  EXPECT_TRUE(named(chain[1], "uf_nocfi_middle")) << test::describe(chain);
  EXPECT_TRUE(named(chain[2], "uf_run_nocfi")) << test::describe(chain);
  EXPECT_TRUE(contains(chain[3], "sample_without_cfi")) << test::describe(chain);
  expect_reaches_start(chain);
  EXPECT_EQ(unwinder.stats().frame_pointer_steps, 1u);
  EXPECT_EQ(unwinder.stats().truncated, 0u);
}

TEST(DwarfUnwind, StackCopyEndingEarlyGivesThePrefixAndCountsIt) {
  OwnSample full = sample_through_qsort();
  DwarfUnwinder unwinder;
  auto all = unwind(unwinder, full);
  ASSERT_EQ(unwinder.stats().truncated, 0u);
  size_t previous_frames = 0;
  uint64_t shorter = 0;
  for (size_t bytes : {size_t{0}, size_t{7}, size_t{64}, size_t{512}, size_t{2048}}) {
    OwnSample cut = full;
    cut.stack.resize(std::min(bytes, full.stack.size()));
    auto pcs = unwind(unwinder, cut);
    ASSERT_GE(pcs.size(), 1u);
    ASSERT_LE(pcs.size(), all.size()) << bytes << " bytes";
    EXPECT_TRUE(std::equal(pcs.begin(), pcs.end(), all.begin())) << bytes << " bytes";
    EXPECT_GE(pcs.size(), previous_frames);
    previous_frames = pcs.size();
    if (pcs.size() < all.size()) ++shorter;
  }
  EXPECT_EQ(shorter, 5u);           // 2 KiB is far from main's frames
  EXPECT_GT(previous_frames, 2u);   // but holds the leaf's, the comparator's and qsort's
  EXPECT_EQ(unwinder.stats().samples, 6u);
  EXPECT_EQ(unwinder.stats().truncated, shorter);
  EXPECT_EQ(unwinder.stats().stack_ended, shorter);
}

TEST(DwarfUnwind, StopsAtTheFrameLimit) {
  OwnSample own = sample_through_qsort();
  DwarfUnwinder unwinder;
  auto all = unwind(unwinder, own);
  auto three = unwind(unwinder, own, 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_TRUE(std::equal(three.begin(), three.end(), all.begin()));
  EXPECT_TRUE(unwind(unwinder, own, 0).empty());
  EXPECT_EQ(unwind(unwinder, own, 1), std::vector<uint64_t>{own.regs.ip()});
  EXPECT_EQ(unwinder.stats().truncated, 2u);  // 3 and 1 frames; 0 asked for nothing
}

// The address of a PLT entry of the fixture library: the first one after PLT0.
uint64_t fixture_plt_entry() {
  const ImageMapping* mapping = own_maps().find(reinterpret_cast<uint64_t>(&uf_leaf));
  if (mapping == nullptr) return 0;
  auto image = symbolize::ElfImage::open(mapping->path);
  if (!image) return 0;
  size_t names = 0;
  elf_getshdrstrndx(image->elf(), &names);
  for (Elf_Scn* scn = elf_nextscn(image->elf(), nullptr); scn; scn = elf_nextscn(image->elf(), scn)) {
    GElf_Shdr header;
    gelf_getshdr(scn, &header);
    if (std::strcmp(elf_strptr(image->elf(), names, header.sh_name), ".plt") != 0) continue;
    auto link = symbolize::link_time_address(image->load_segments(), image->is_exec(),
                                             mapping->start, mapping->pgoff, mapping->start);
    return mapping->start - *link + header.sh_addr + 16;
  }
  return 0;
}

TEST(DwarfUnwind, SampleInPltStub) {
  // Sampled on a PLT entry's first instruction, just called: the return address is on
  // top of the stack, as in the leaf sample (uf_leaf has no frame), so the rest of the
  // chain is the leaf sample's.
  OwnSample own = sample_through_qsort();
  uint64_t plt = fixture_plt_entry();
  ASSERT_NE(plt, 0u);
  DwarfUnwinder unwinder;
  auto from_leaf = unwind(unwinder, own);
  own.regs.value[PERF_REG_X86_IP] = plt;
  auto from_plt = unwind(unwinder, own);
  ASSERT_EQ(from_plt.size(), from_leaf.size());
  EXPECT_EQ(from_plt[0], plt);
  EXPECT_TRUE(std::equal(from_plt.begin() + 1, from_plt.end(), from_leaf.begin() + 1));
  EXPECT_EQ(unwinder.stats().frame_pointer_steps, 0u);
}

// The address of a function of this process's vdso, from its dynamic symbols.
uint64_t own_vdso_function(const char* wanted) {
  const auto* base = reinterpret_cast<const uint8_t*>(getauxval(AT_SYSINFO_EHDR));
  if (base == nullptr) return 0;
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(base);
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(base + header->e_shoff);
  uint64_t load_vaddr = 0;
  const auto* segments = reinterpret_cast<const Elf64_Phdr*>(base + header->e_phoff);
  for (int i = 0; i < header->e_phnum; ++i)
    if (segments[i].p_type == PT_LOAD) {
      load_vaddr = segments[i].p_vaddr - segments[i].p_offset;
      break;
    }
  for (int i = 0; i < header->e_shnum; ++i) {
    if (sections[i].sh_type != SHT_DYNSYM) continue;
    const auto* symbols = reinterpret_cast<const Elf64_Sym*>(base + sections[i].sh_offset);
    const char* strings = reinterpret_cast<const char*>(base + sections[sections[i].sh_link].sh_offset);
    for (size_t j = 0; j < sections[i].sh_size / sizeof(Elf64_Sym); ++j)
      if (std::strcmp(strings + symbols[j].st_name, wanted) == 0)
        return reinterpret_cast<uint64_t>(base) + symbols[j].st_value - load_vaddr;
  }
  return 0;
}

TEST(DwarfUnwind, SampleInVdso) {
  OwnSample own = sample_through_qsort();
  uint64_t vdso_function = own_vdso_function("__vdso_clock_gettime");
  if (vdso_function == 0) TALLY_SKIP_OR_FAIL_IN_CI("no vdso with __vdso_clock_gettime");
  ASSERT_NE(own_maps().find(vdso_function), nullptr);
  EXPECT_EQ(own_maps().find(vdso_function)->path, "[vdso]");
  DwarfUnwinder unwinder;
  auto from_leaf = unwind(unwinder, own);
  own.regs.value[PERF_REG_X86_IP] = vdso_function;  // just called, like the leaf
  auto from_vdso = unwind(unwinder, own);
  ASSERT_EQ(from_vdso.size(), from_leaf.size());
  EXPECT_EQ(from_vdso[0], vdso_function);
  EXPECT_TRUE(std::equal(from_vdso.begin() + 1, from_vdso.end(), from_leaf.begin() + 1));
  EXPECT_EQ(unwinder.stats().frame_pointer_steps, 0u);  // the vdso's own CFI was used
  EXPECT_EQ(unwinder.stats().images_missing, 0u);
}

TEST(DwarfUnwind, KernelThreadAndCompatSamples) {
  OwnSample own = sample_through_qsort();
  DwarfUnwinder unwinder;
  own.regs.abi = PERF_SAMPLE_REGS_ABI_NONE;
  EXPECT_TRUE(unwind(unwinder, own).empty());
  own.regs.abi = PERF_SAMPLE_REGS_ABI_32;
  EXPECT_EQ(unwind(unwinder, own), std::vector<uint64_t>{own.regs.ip()});
}

TEST(DwarfUnwind, MissingFilesAreCountedNotFatal) {
  OwnSample own = sample_through_qsort();
  // The same address ranges, every file gone.
  AddressSpace gone;
  for (const ImageMapping* mapping : own_maps().all()) {
    ImageMapping copy = *mapping;
    if (!copy.path.empty() && copy.path.front() == '/') copy.path = "/nonexistent" + copy.path;
    gone.add(copy);
  }
  DwarfUnwinder unwinder;
  std::vector<uint64_t> pcs;
  unwinder.unwind(getpid(), gone, own.regs, own.stack, pcs);
  ASSERT_GE(pcs.size(), 1u);
  EXPECT_EQ(pcs[0], own.regs.ip());
  EXPECT_GT(unwinder.stats().images_missing, 0u);
  EXPECT_EQ(unwinder.stats().samples, 1u);
}

TEST(DwarfUnwind, GarbageNeverCrashesNorRunsAway) {
  OwnSample own = sample_through_qsort();
  std::mt19937_64 random(6);
  DwarfUnwinder unwinder;
  const AddressSpace& maps = own_maps();
  auto all = maps.all();
  for (int round = 0; round < 2000; ++round) {
    UserRegs regs;
    regs.abi = PERF_SAMPLE_REGS_ABI_64;
    for (auto& value : regs.value) value = random();
    std::vector<uint8_t> stack(random() % 4096);
    for (auto& byte : stack) byte = static_cast<uint8_t>(random());
    switch (round % 4) {
      case 0:
        break;  // everything random
      case 1: {  // a real code address and stack pointer over random bytes
        const ImageMapping* code = all[random() % all.size()];
        regs.value[PERF_REG_X86_IP] = code->start + random() % (code->limit - code->start);
        regs.value[PERF_REG_X86_SP] = own.regs.sp();
        break;
      }
      case 2:  // the real sample, its stack shuffled with code addresses and pointers into itself
        regs = own.regs;
        stack.assign(own.stack.begin(), own.stack.begin() + std::min<size_t>(own.stack.size(), 4096));
        for (size_t i = 0; i + 8 <= stack.size(); i += 8) {
          uint64_t word = random() % 2 ? own.regs.sp() + random() % 4096
                                       : all[random() % all.size()]->start + random() % 4096;
          if (random() % 3 == 0) std::memcpy(&stack[i], &word, 8);
        }
        break;
      case 3:  // rbp chains that point at themselves
        regs = own.regs;
        regs.value[PERF_REG_X86_IP] = 0x1234;  // in no mapping: only the frame pointer is left
        regs.value[PERF_REG_X86_BP] = regs.sp();
        stack.assign(64, 0);
        std::memcpy(stack.data(), &regs.value[PERF_REG_X86_BP], 8);
        std::memcpy(stack.data() + 8, &own.regs.value[PERF_REG_X86_IP], 8);
        break;
    }
    std::vector<uint64_t> pcs;
    unwinder.unwind(getpid(), maps, regs, stack, pcs, 64);
    ASSERT_GE(pcs.size(), 1u);
    ASSERT_LE(pcs.size(), 64u);
    EXPECT_EQ(pcs[0], regs.ip());
  }
  EXPECT_EQ(unwinder.stats().samples, 2000u);
}

TEST(DwarfUnwind, FilesAreSharedAcrossProcessesAndStateFollowsTheMaps) {
  OwnSample own = sample_through_qsort();
  DwarfUnwinder unwinder;
  AddressSpace first = own_maps();
  AddressSpace second = own_maps();
  std::vector<uint64_t> a, b;
  unwinder.unwind(1000001, first, own.regs, own.stack, a);
  uint64_t opened = unwinder.stats().images_opened;
  EXPECT_GT(opened, 2u);  // the test, libc, the fixture library...
  unwinder.unwind(1000002, second, own.regs, own.stack, b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(unwinder.stats().images_opened, opened);  // nothing opened again
  EXPECT_EQ(unwinder.stats().rebuilds, 2u);

  // A data mapping changes the generation but not the modules: nothing is rebuilt.
  ImageMapping data;
  data.start = 0x10000;
  data.limit = 0x20000;
  data.path = "";
  first.add(data);
  a.clear();
  unwinder.unwind(1000001, first, own.regs, own.stack, a);
  EXPECT_EQ(unwinder.stats().rebuilds, 2u);
  EXPECT_EQ(a, b);

  // The fixture library unmapped (replaced by anonymous memory): rebuilt, and the chain
  // stops where the library's code was.
  ImageMapping hole = *first.find(reinterpret_cast<uint64_t>(&uf_leaf));
  hole.path = "";
  hole.executable = false;
  first.add(hole);
  std::vector<uint64_t> c;
  unwinder.unwind(1000001, first, own.regs, own.stack, c);
  EXPECT_EQ(unwinder.stats().rebuilds, 3u);
  EXPECT_LT(c.size(), a.size());

  unwinder.forget(1000001);
  c.clear();
  unwinder.unwind(1000001, second, own.regs, own.stack, c);
  EXPECT_EQ(c, b);
  EXPECT_EQ(unwinder.stats().rebuilds, 4u);
  EXPECT_EQ(unwinder.stats().images_opened, opened);
}

}  // namespace
}  // namespace tally::collect
