// The reports' hot loops on a big profile: top (sum_nodes over every frame of every stack),
// tree (the node and edge graph, twice) and the flame graph's stack merging. The input is a
// synthetic gperftools profile (synthetic_profile.h: 32-frame stacks, 8000 functions) read
// once; the argument is its number of records. Every sum here saturates (core/checked_math.h):
// these figures show what that costs.
#include <benchmark/benchmark.h>

#include <map>

#include "analyze/flame_svg.h"
#include "analyze/flame_tree.h"
#include "analyze/top.h"
#include "analyze/tree.h"
#include "core/diagnostics.h"
#include "formats/gperf/gperf_convert.h"
#include "synthetic_profile.h"

namespace {

using namespace tally;

struct Input {
  core::Profile profile;
  bench::SyntheticStats stats;
  int64_t period_ns = 0;
};

const Input& input(int64_t records) {
  static std::map<int64_t, Input> cache;
  auto it = cache.find(records);
  if (it != cache.end()) return it->second;
  Input in;
  bench::SyntheticOptions options;
  options.records = static_cast<uint64_t>(records);
  const std::vector<uint8_t> bytes = bench::synthetic_gperf_profile(options, &in.stats);
  core::Diagnostics diagnostics;
  auto profile = gperf::read_profile(bytes, "synthetic", diagnostics);
  if (profile) in.profile = std::move(*profile);
  in.period_ns = static_cast<int64_t>(options.period_us) * 1000;
  return cache.emplace(records, std::move(in)).first->second;
}

// The default value (cpu, nanoseconds) of every sample: a report's total must be this.
int64_t expected_total(const Input& in) {
  return static_cast<int64_t>(in.stats.samples) * in.period_ns;
}

void frames_processed(benchmark::State& state, const Input& in) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.stats.records) *
                          static_cast<int64_t>(bench::SyntheticOptions{}.depth));
}

void BM_ComputeTop(benchmark::State& state) {
  const Input& in = input(state.range(0));
  analyze::TopOptions options;
  options.node_count = 20;
  for (auto _ : state) {
    auto top = analyze::compute_top(in.profile, options);
    if (!top || top->total != expected_total(in)) {
      state.SkipWithError("compute_top failed or disagrees with the generator's total");
      return;
    }
    benchmark::DoNotOptimize(top->rows.data());
  }
  frames_processed(state, in);
}
BENCHMARK(BM_ComputeTop)->Arg(300'000)->Unit(benchmark::kMillisecond);

void BM_ComputeTree(benchmark::State& state) {
  const Input& in = input(state.range(0));
  analyze::TreeOptions options;
  for (auto _ : state) {
    auto tree = analyze::compute_tree(in.profile, options);
    if (!tree || tree->summary.total != expected_total(in)) {
      state.SkipWithError("compute_tree failed or disagrees with the generator's total");
      return;
    }
    benchmark::DoNotOptimize(tree->entries.data());
  }
  frames_processed(state, in);
}
BENCHMARK(BM_ComputeTree)->Arg(300'000)->Unit(benchmark::kMillisecond);

void BM_BuildFlameTree(benchmark::State& state) {
  const Input& in = input(state.range(0));
  analyze::FlameTreeOptions options;
  options.min_fraction = analyze::min_frame_fraction({});
  for (auto _ : state) {
    auto tree = analyze::build_flame_tree(in.profile, options);
    if (!tree || tree->total() != expected_total(in)) {
      state.SkipWithError("build_flame_tree failed or disagrees with the generator's total");
      return;
    }
    benchmark::DoNotOptimize(tree->frames.data());
  }
  frames_processed(state, in);
}
BENCHMARK(BM_BuildFlameTree)->Arg(300'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
