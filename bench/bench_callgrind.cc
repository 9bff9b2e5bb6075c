// Callgrind read and write throughput on a synthetic valgrind-like file made in memory
// (synthetic_callgrind.h). The argument is the number of parts (dumps); each is ~8 MB with
// the default 30000 functions. Read bytes/s are of the input text, write bytes/s of the
// text written. The read result is checked once against the generator's counts.
#include <benchmark/benchmark.h>

#include <map>
#include <stdexcept>

#include "core/diagnostics.h"
#include "formats/callgrind/callgrind.h"
#include "synthetic_callgrind.h"

namespace {

using namespace tally;

struct Input {
  std::string text;
  bench::SyntheticCallgrindStats stats;
  std::span<const uint8_t> bytes() const {
    return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
  }
};

const Input& input(int64_t parts) {
  static std::map<int64_t, Input> cache;
  auto it = cache.find(parts);
  if (it != cache.end()) return it->second;
  Input in;
  bench::SyntheticCallgrindOptions options;
  options.parts = static_cast<uint32_t>(parts);
  in.text = bench::synthetic_callgrind(options, &in.stats);
  return cache.emplace(parts, std::move(in)).first->second;
}

const core::Profile& profile(int64_t parts) {
  static std::map<int64_t, core::Profile> cache;
  auto it = cache.find(parts);
  if (it != cache.end()) return it->second;
  const Input& in = input(parts);
  core::Diagnostics diagnostics;
  auto p = callgrind::read_profile(in.bytes(), "synthetic", diagnostics);
  if (!p) throw std::runtime_error(p.error().message);
  // Every self-cost line is counted once, whatever positions it shares with others.
  if (p->total(0) != in.stats.total_ir || p->call_graph.parts.size() != static_cast<size_t>(parts))
    throw std::runtime_error("read disagrees with the generator's counts");
  if (!diagnostics.warnings().empty())
    throw std::runtime_error("unexpected warning: " + diagnostics.warnings().front());
  return cache.emplace(parts, std::move(*p)).first->second;
}

void BM_CallgrindRead(benchmark::State& state) {
  const Input& in = input(state.range(0));
  (void)profile(state.range(0));  // checks the result once
  for (auto _ : state) {
    core::Diagnostics diagnostics;
    auto p = callgrind::read_profile(in.bytes(), "synthetic", diagnostics);
    benchmark::DoNotOptimize(p);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(in.text.size()));
  state.counters["cost_lines"] = static_cast<double>(in.stats.cost_lines);
  state.counters["calls"] = static_cast<double>(in.stats.calls);
  state.counters["jumps"] = static_cast<double>(in.stats.jumps);
}

void write_callgrind(benchmark::State& state, bool compress) {
  const core::Profile& p = profile(state.range(0));
  size_t written = 0;
  for (auto _ : state) {
    core::Diagnostics diagnostics;
    auto text = callgrind::write_callgrind(p, {compress, compress}, diagnostics);
    if (!text) {
      state.SkipWithError(text.error().message.c_str());
      return;
    }
    written = text->size();
    benchmark::DoNotOptimize(text);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(written));
  state.counters["out_MB"] = static_cast<double>(written) / 1e6;
}

void BM_CallgrindWrite(benchmark::State& state) { write_callgrind(state, true); }
void BM_CallgrindWriteUncompressed(benchmark::State& state) { write_callgrind(state, false); }

void BM_CallgrindGenerate(benchmark::State& state) {  // the generator, for scale
  bench::SyntheticCallgrindOptions options;
  options.parts = static_cast<uint32_t>(state.range(0));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = bench::synthetic_callgrind(options);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

}  // namespace

BENCHMARK(BM_CallgrindRead)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CallgrindWrite)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CallgrindWriteUncompressed)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CallgrindGenerate)->Arg(8)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
