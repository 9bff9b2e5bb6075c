// The DWARF unwinder (`tally record -g dwarf`) on real samples: the benchmark samples
// itself through tests/collect/unwind_fixture (a library without frame pointers calling
// libc's qsort, whose comparator ends in a frameless leaf that copies its registers and
// stack like PERF_SAMPLE_REGS_USER / PERF_SAMPLE_STACK_USER), then unwinds that sample
// over and over: samples/s and frames/s in the steady state (files and CFI cached), per
// new process (its Dwfl built over already-open files), and cold (files opened too).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <map>

#include "collect/dwarf_unwind.h"
#include "unwind_test_support.h"

namespace {

using namespace tally;

const collect::AddressSpace& own_maps() {
  static collect::ProcessTable table;
  static const collect::AddressSpace* maps = [] {
    table.load_proc_maps(getpid());
    return table.find(getpid());
  }();
  return *maps;
}

// A sample 10 frames deep at depth 0 (uf_leaf, uf_compare, 3 x msort_with_tmp, qsort_r,
// uf_sort, uf_recurse, uf_run, this function) plus the benchmark's own callers and libc's
// start-up frames; a 16 KiB stack copy, perf's default.
__attribute__((noinline)) const test::OwnSample& sample(int depth) {
  static std::map<int, test::OwnSample> samples;
  auto it = samples.find(depth);
  if (it == samples.end()) {
    auto own = test::take_sample([depth](UfSample* s) { uf_run(s, depth); }, 16384);
    it = samples.emplace(depth, std::move(own)).first;
  }
  return it->second;
}

void report(benchmark::State& state, const collect::UnwindStats& stats) {
  state.counters["samples/s"] =
      benchmark::Counter(static_cast<double>(stats.samples), benchmark::Counter::kIsRate);
  state.counters["frames/s"] =
      benchmark::Counter(static_cast<double>(stats.frames), benchmark::Counter::kIsRate);
  state.counters["frames/sample"] = static_cast<double>(stats.frames) / static_cast<double>(stats.samples);
}

// Samples the kernel took of this thread burning CPU in the fixture's leaf under qsort
// (cpu-clock every 2 ms, 16 KiB of stack), taken once.
const std::vector<test::KernelSample>& kernel_samples() {
  static const std::vector<test::KernelSample> samples = [] {
    test::SelfSampler sampler(2'000'000, 16384);
    if (!sampler.problem().empty()) return std::vector<test::KernelSample>{};
    sampler.start();
    benchmark::DoNotOptimize(uf_spin(4'000'000));
    sampler.stop();
    return sampler.samples();
  }();
  return samples;
}

// The kernel's samples unwound in turn, as the recorder does.
void BM_UnwindKernelSamples(benchmark::State& state) {
  const auto& samples = kernel_samples();
  if (samples.empty()) {
    state.SkipWithError("perf_event_open is not permitted here");
    return;
  }
  collect::DwarfUnwinder unwinder;
  std::vector<uint64_t> pcs;
  for (const auto& s : samples) unwinder.unwind(getpid(), own_maps(), s.regs, s.stack, pcs);
  collect::UnwindStats before = unwinder.stats();
  size_t next = 0;
  for (auto _ : state) {
    const auto& s = samples[next++ % samples.size()];
    pcs.clear();
    unwinder.unwind(getpid(), own_maps(), s.regs, s.stack, pcs);
    benchmark::DoNotOptimize(pcs.data());
  }
  collect::UnwindStats delta = unwinder.stats();
  delta.samples -= before.samples;
  delta.frames -= before.frames;
  report(state, delta);
}
BENCHMARK(BM_UnwindKernelSamples);

// Steady state: one process, its Dwfl and the files' CFI warm. Arguments: the fixture's
// recursion depth, the frame limit.
void BM_UnwindSteady(benchmark::State& state) {
  const auto& own = sample(static_cast<int>(state.range(0)));
  collect::DwarfUnwinder unwinder;
  std::vector<uint64_t> pcs;
  unwinder.unwind(getpid(), own_maps(), own.regs, own.stack, pcs);  // warm up
  collect::UnwindStats before = unwinder.stats();
  for (auto _ : state) {
    pcs.clear();
    unwinder.unwind(getpid(), own_maps(), own.regs, own.stack, pcs,
                    static_cast<size_t>(state.range(1)));
    benchmark::DoNotOptimize(pcs.data());
  }
  collect::UnwindStats delta = unwinder.stats();
  delta.samples -= before.samples;
  delta.frames -= before.frames;
  report(state, delta);
}
BENCHMARK(BM_UnwindSteady)->Args({0, 10})->Args({0, 512})->Args({20, 512});

// The first sample of each new process mapping the same files (fork-heavy workloads, the
// system-wide daemon): a Dwfl per process, CFI caches cold, files already open.
void BM_UnwindNewProcess(benchmark::State& state) {
  const auto& own = sample(0);
  collect::DwarfUnwinder unwinder;
  std::vector<uint64_t> pcs;
  unwinder.unwind(1, own_maps(), own.regs, own.stack, pcs);
  pid_t pid = 2;
  for (auto _ : state) {
    pcs.clear();
    unwinder.unwind(pid, own_maps(), own.regs, own.stack, pcs, 10);
    unwinder.forget(pid++);
  }
  report(state, unwinder.stats());
}
BENCHMARK(BM_UnwindNewProcess);

// Everything cold: a new unwinder opens every mapped file.
void BM_UnwindCold(benchmark::State& state) {
  const auto& own = sample(0);
  std::vector<uint64_t> pcs;
  uint64_t samples = 0, frames = 0;
  for (auto _ : state) {
    collect::DwarfUnwinder unwinder;
    pcs.clear();
    unwinder.unwind(getpid(), own_maps(), own.regs, own.stack, pcs, 10);
    samples += unwinder.stats().samples;
    frames += unwinder.stats().frames;
  }
  collect::UnwindStats stats;
  stats.samples = samples;
  stats.frames = frames;
  report(state, stats);
}
BENCHMARK(BM_UnwindCold);

}  // namespace

BENCHMARK_MAIN();
