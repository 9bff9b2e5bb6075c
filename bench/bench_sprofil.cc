// The work of one sprofil() tick in the signal handler: pc -> region -> counter, and the
// saturating atomic increment. tally's region table with 1 to 1M regions, against glibc's
// own handler (profil_count, called the way the kernel calls it, with a made-up signal
// context) on the same 1000 regions. Pcs come from a fixed pseudo-random sequence: every
// tick in another region (glibc's binary search), or all in one region (its fast path).
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/profil.h>
#include <sys/time.h>
#include <ucontext.h>

#include <cstdint>
#include <vector>

#include "runtime/sprofil_regions.h"

namespace {

using tally::runtime::RegionTable;
using tally::runtime::RegionTablePtr;

constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kRegionText = 256;  // bytes of text per region, 2 per counter
constexpr uint64_t kStride = 320;      // regions apart, with a gap between

struct Regions {
  explicit Regions(size_t n) : counters(n * kRegionText / 2), entries(n + 1) {
    for (size_t i = 0; i < n; ++i) {
      entries[i].pr_base = &counters[i * kRegionText / 2];
      entries[i].pr_size = kRegionText;
      entries[i].pr_off = kBase + i * kStride;
      entries[i].pr_scale = 65536;
    }
    entries[n] = prof{&overflow, sizeof overflow, 0, 2};
  }
  std::vector<uint16_t> counters;
  uint16_t overflow = 0;
  std::vector<prof> entries;
};

// 4096 pcs: in a random region each (1 in 5 in a gap, for the overflow bin), or all in
// region 0.
std::vector<uint64_t> pcs(size_t regions, bool same_region) {
  std::vector<uint64_t> out(4096);
  uint64_t x = 88172645463325252ull;
  for (uint64_t& pc : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint64_t region = same_region ? 0 : x % regions;
    pc = kBase + region * kStride + (x >> 20) % kStride;
  }
  return out;
}

void BM_TallyCount(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const bool same = state.range(1) != 0;
  Regions regions(n);
  RegionTablePtr table;
  if (RegionTable::build(regions.entries.data(), static_cast<int>(n + 1), PROF_USHORT, table) != 0)
    state.SkipWithError("build failed");
  const std::vector<uint64_t> sequence = pcs(n, same);
  size_t i = 0;
  for (auto _ : state) {
    table->count(sequence[i++ & 4095], 1);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["segments"] = static_cast<double>(table->segment_count());
}
BENCHMARK(BM_TallyCount)
    ->ArgNames({"regions", "same"})
    ->Args({1, 1})
    ->Args({1000, 0})
    ->Args({1000, 1})
    ->Args({100000, 0})
    ->Args({1000000, 0});

// Building the table (tally_sprofil's work before the swap), overlapping regions included.
void BM_TallyBuild(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Regions regions(n);
  for (size_t i = 1; i < n; i += 7) regions.entries[i].pr_off -= 100;  // overlap the previous
  for (auto _ : state) {
    RegionTablePtr table;
    benchmark::DoNotOptimize(
        RegionTable::build(regions.entries.data(), static_cast<int>(n + 1), PROF_USHORT, table));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_TallyBuild)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);

// glibc's SIGPROF handler, installed by its sprofil() on 1000 regions. glibc's state is
// global and its sprofil() cannot be called twice: one set-up per process, timer stopped.
void (*glibc_handler())(int, siginfo_t*, void*) {
  static Regions* regions = [] {
    auto* r = new Regions(1000);
    sprofil(r->entries.data(), 1001, nullptr, PROF_USHORT);
    itimerval stop{};
    setitimer(ITIMER_PROF, &stop, nullptr);
    return r;
  }();
  (void)regions;
  struct sigaction installed {};
  sigaction(SIGPROF, nullptr, &installed);
  return installed.sa_sigaction;
}

void BM_GlibcProfilCount(benchmark::State& state) {
  const bool same = state.range(1) != 0;
  auto handler = glibc_handler();
  const std::vector<uint64_t> sequence = pcs(1000, same);
  siginfo_t info{};
  info.si_signo = SIGPROF;
  ucontext_t uc{};
  size_t i = 0;
  for (auto _ : state) {
#if defined(__x86_64__)
    uc.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(sequence[i++ & 4095]);
#elif defined(__aarch64__)
    uc.uc_mcontext.pc = sequence[i++ & 4095];
#endif
    handler(SIGPROF, &info, &uc);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_GlibcProfilCount)->ArgNames({"regions", "same"})->Args({1000, 0})->Args({1000, 1});

}  // namespace

BENCHMARK_MAIN();
