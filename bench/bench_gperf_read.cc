// The hot loops behind `tally cat --summary` on a big gperftools profile: scanning records,
// records -> merged core::Profile, address -> location id, stack merging, canonicalize.
// Inputs are synthetic profiles made in memory (synthetic_profile.h) with 32-frame stacks;
// the argument of each benchmark is the number of records (1M records is ~270 MB).
#include <benchmark/benchmark.h>

#include <map>
#include <unordered_map>
#include <vector>

#include "core/address_map.h"
#include "core/diagnostics.h"
#include "core/profile.h"
#include "core/sample_merger.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/gperf_file.h"
#include "synthetic_profile.h"

namespace {

using namespace tally;

struct Input {
  std::vector<uint8_t> bytes;
  bench::SyntheticStats stats;
  // Every record's PCs adjusted as the reader does (callers minus one), record after record.
  std::vector<uint64_t> addresses;
  std::vector<uint64_t> counts;  // per record
  unsigned depth = 0;
};

// Inputs are costly to make (seconds per million records): made once per size.
const Input& input(int64_t records) {
  static std::map<int64_t, Input> cache;
  auto it = cache.find(records);
  if (it != cache.end()) return it->second;
  Input in;
  bench::SyntheticOptions options;
  options.records = static_cast<uint64_t>(records);
  in.depth = options.depth;
  in.bytes = bench::synthetic_gperf_profile(options, &in.stats);
  // Decoded here by hand rather than by the scanner under test.
  const size_t words = (in.bytes.size() - 40) / 8;
  auto word = [&](size_t i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = v << 8 | in.bytes[40 + 8 * i + size_t(b)];
    return v;
  };
  for (size_t i = 0; i + 1 < words;) {
    uint64_t count = word(i), n = word(i + 1);
    if (count == 0) break;  // trailer
    in.counts.push_back(count);
    for (uint64_t k = 0; k < n; ++k) in.addresses.push_back(word(i + 2 + k) - (k == 0 ? 0 : 1));
    i += 2 + n;
  }
  return cache.emplace(records, std::move(in)).first->second;
}

void set_bytes(benchmark::State& state, const Input& in) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.bytes.size()));
  state.counters["records"] = static_cast<double>(in.stats.records);
}

void BM_RecordScanner(benchmark::State& state) {
  const Input& in = input(state.range(0));
  for (auto _ : state) {
    gperf::RecordScanner scanner(in.bytes);
    gperf::Record r;
    uint64_t samples = 0;
    while (scanner.next(r)) samples += r.count + r.pcs.back();
    benchmark::DoNotOptimize(samples);
  }
  set_bytes(state, in);
}
BENCHMARK(BM_RecordScanner)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_ReadProfile(benchmark::State& state) {
  const Input& in = input(state.range(0));
  for (auto _ : state) {
    core::Diagnostics diagnostics;
    auto profile = gperf::read_profile(in.bytes, "synthetic", diagnostics);
    if (!profile) {
      state.SkipWithError(profile.error().message.c_str());
      return;
    }
    // A benchmark of a wrong result is worthless: check against the generator's counts.
    if (profile->sample_count() != in.stats.distinct_stacks ||
        profile->locations.size() != in.stats.distinct_pcs ||
        profile->total(0) != static_cast<int64_t>(in.stats.samples)) {
      state.SkipWithError("read_profile disagrees with the generator's counts");
      return;
    }
  }
  set_bytes(state, in);
  state.counters["distinct_stacks"] = static_cast<double>(in.stats.distinct_stacks);
}
BENCHMARK(BM_ReadProfile)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_AddressMapFindOrInsert(benchmark::State& state) {
  const Input& in = input(state.range(0));
  for (auto _ : state) {
    core::AddressMap map;
    uint32_t next = 1;
    bool inserted;
    for (uint64_t a : in.addresses) {
      map.find_or_insert(a, next, inserted);
      next += inserted;
    }
    benchmark::DoNotOptimize(next);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.addresses.size()));
}
BENCHMARK(BM_AddressMapFindOrInsert)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_AddressMapFind(benchmark::State& state) {
  const Input& in = input(state.range(0));
  core::AddressMap map;
  uint32_t next = 1;
  bool inserted;
  for (uint64_t a : in.addresses) {
    map.find_or_insert(a, next, inserted);
    next += inserted;
  }
  for (auto _ : state) {
    uint64_t sum = 0;
    for (uint64_t a : in.addresses) sum += map.find(a);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.addresses.size()));
}
BENCHMARK(BM_AddressMapFind)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_SampleMergerAdd(benchmark::State& state) {
  const Input& in = input(state.range(0));
  // Location ids as the reader would give them, assigned with a std::unordered_map.
  std::vector<core::LocationId> ids;
  ids.reserve(in.addresses.size());
  std::unordered_map<uint64_t, core::LocationId> id_of;
  for (uint64_t a : in.addresses)
    ids.push_back(id_of.try_emplace(a, core::LocationId(id_of.size() + 1)).first->second);
  for (auto _ : state) {
    core::Profile p;
    p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
    core::SampleMerger merger(p);
    for (size_t r = 0; r < in.counts.size(); ++r) {
      auto count = static_cast<int64_t>(in.counts[r]);
      int64_t values[2] = {count, count * 10'000'000};
      merger.add({ids.data() + r * in.depth, in.depth}, values);
    }
    if (p.sample_count() != in.stats.distinct_stacks) {
      state.SkipWithError("SampleMerger disagrees with the generator's distinct stacks");
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.counts.size()));
}
BENCHMARK(BM_SampleMergerAdd)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_Canonicalize(benchmark::State& state) {
  const Input& in = input(state.range(0));
  core::Diagnostics diagnostics;
  auto read = gperf::read_profile(in.bytes, "synthetic", diagnostics);
  if (!read) {
    state.SkipWithError(read.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    core::Profile p = *read;
    state.ResumeTiming();
    p.canonicalize();
    benchmark::DoNotOptimize(p.sample_count());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * read->sample_count()));
  state.counters["samples"] = static_cast<double>(read->sample_count());
  state.counters["locations"] = static_cast<double>(read->locations.size());
}
BENCHMARK(BM_Canonicalize)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
