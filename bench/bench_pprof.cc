// pprof read and write, whole and by phase, on synthetic profiles made in memory
// (synthetic_pprof.h). The argument is the number of stacks drawn; 200k draws make a
// ~10 MB .pb.gz. Read = read_profile (gunzip, wire check, decode, canonicalize); write =
// write_profile (canonicalize, encode, gzip on every core). Bytes/s are of the gzipped
// file, as for a user's .pb.gz. libprotobuf's parse and serialization of the same message
// (no longer on tally's path) are there for comparison.
#include <benchmark/benchmark.h>

#include <map>

#include "core/diagnostics.h"
#include "formats/pprof/pprof.h"
#include "formats/pprof/pprof_wire.h"
#include "io/gzip.h"
#include "profile.pb.h"
#include "synthetic_pprof.h"

namespace {

using namespace tally;

struct Input {
  std::string gz;
  std::vector<uint8_t> raw;  // inflated
  bench::SyntheticPprofStats stats;
  std::span<const uint8_t> bytes() const {
    return {reinterpret_cast<const uint8_t*>(gz.data()), gz.size()};
  }
};

const Input& input(int64_t draws) {
  static std::map<int64_t, Input> cache;
  auto it = cache.find(draws);
  if (it != cache.end()) return it->second;
  Input in;
  bench::SyntheticPprofOptions options;
  options.draws = static_cast<uint64_t>(draws);
  in.gz = bench::synthetic_pprof_profile(options, &in.stats);
  in.raw = std::move(*io::gunzip(in.bytes(), "synthetic"));
  return cache.emplace(draws, std::move(in)).first->second;
}

bool agrees(const core::Profile& p, const bench::SyntheticPprofStats& s) {
  return p.sample_count() == s.samples && p.locations.size() == s.locations &&
         p.functions.size() == s.functions && p.total(0) == static_cast<int64_t>(s.total_count);
}

// The profile as read, checked once against the generator's counts.
const core::Profile& profile(int64_t draws) {
  static std::map<int64_t, core::Profile> cache;
  auto it = cache.find(draws);
  if (it != cache.end()) return it->second;
  const Input& in = input(draws);
  core::Diagnostics diagnostics;
  auto p = pprof::read_profile(in.bytes(), "synthetic", diagnostics);
  if (!p) throw std::runtime_error(p.error().message);
  if (!agrees(*p, in.stats)) throw std::runtime_error("read disagrees with the generator's counts");
  return cache.emplace(draws, std::move(*p)).first->second;
}

void counters(benchmark::State& state, const Input& in) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.gz.size()));
  state.counters["gz_MB"] = static_cast<double>(in.gz.size()) / 1e6;
  state.counters["raw_MB"] = static_cast<double>(in.stats.raw_bytes) / 1e6;
  state.counters["samples"] = static_cast<double>(in.stats.samples);
}

void BM_PprofRead(benchmark::State& state) {
  const Input& in = input(state.range(0));
  for (auto _ : state) {
    core::Diagnostics diagnostics;
    auto p = pprof::read_profile(in.bytes(), "synthetic", diagnostics);
    if (!p || !agrees(*p, in.stats))
      return state.SkipWithError("read disagrees with the generator's counts");
  }
  counters(state, in);
}
BENCHMARK(BM_PprofRead)->Arg(200'000)->Unit(benchmark::kMillisecond);

void BM_PprofWrite(benchmark::State& state) {  // the copy write_profile takes is not timed
  const Input& in = input(state.range(0));
  const core::Profile& p = profile(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    core::Profile copy = p;
    state.ResumeTiming();
    std::string out = pprof::write_profile(std::move(copy));
    benchmark::DoNotOptimize(out.data());
  }
  counters(state, in);
}
BENCHMARK(BM_PprofWrite)->Arg(200'000)->Unit(benchmark::kMillisecond)->UseRealTime();

// --- the phases of read ---

void BM_Gunzip(benchmark::State& state) {
  const Input& in = input(state.range(0));
  for (auto _ : state) {
    auto out = io::gunzip(in.bytes(), "synthetic");
    benchmark::DoNotOptimize(out->data());
  }
  counters(state, in);
}
BENCHMARK(BM_Gunzip)->Arg(200'000)->Unit(benchmark::kMillisecond);

void BM_CheckWire(benchmark::State& state) {
  const Input& in = input(state.range(0));
  for (auto _ : state) {
    auto problem = pprof::check_wire(in.raw);
    if (problem) return state.SkipWithError(problem->what.c_str());
  }
  counters(state, in);
}
BENCHMARK(BM_CheckWire)->Arg(200'000)->Unit(benchmark::kMillisecond);

void BM_DecodeProfile(benchmark::State& state) {  // wire check + decode, of inflated bytes
  const Input& in = input(state.range(0));
  for (auto _ : state) {
    core::Diagnostics diagnostics;
    auto p = pprof::decode_profile(in.raw, "synthetic", diagnostics);
    if (!p) return state.SkipWithError(p.error().message.c_str());
    benchmark::DoNotOptimize(p->sample_count());
  }
  counters(state, in);
}
BENCHMARK(BM_DecodeProfile)->Arg(200'000)->Unit(benchmark::kMillisecond);

void BM_CanonicalizeDecoded(benchmark::State& state) {
  const Input& in = input(state.range(0));
  core::Diagnostics diagnostics;
  const core::Profile decoded = *pprof::decode_profile(in.raw, "synthetic", diagnostics);
  for (auto _ : state) {
    state.PauseTiming();
    core::Profile copy = decoded;
    state.ResumeTiming();
    copy.canonicalize();
    benchmark::DoNotOptimize(copy.sample_count());
  }
  counters(state, in);
}
BENCHMARK(BM_CanonicalizeDecoded)->Arg(200'000)->Unit(benchmark::kMillisecond);

// --- the phases of write ---

void BM_EncodeProfile(benchmark::State& state) {
  const Input& in = input(state.range(0));
  const core::Profile& p = profile(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    core::Profile copy = p;
    state.ResumeTiming();
    std::string out = pprof::encode_profile(std::move(copy));
    benchmark::DoNotOptimize(out.data());
  }
  counters(state, in);
}
BENCHMARK(BM_EncodeProfile)->Arg(200'000)->Unit(benchmark::kMillisecond);

// Argument: threads (0: all cores).
void BM_GzipWriter(benchmark::State& state) {
  const Input& in = input(200'000);
  const std::string raw(in.raw.begin(), in.raw.end());
  const unsigned threads =
      state.range(0) == 0 ? io::GzipWriter::all_cores() : static_cast<unsigned>(state.range(0));
  for (auto _ : state) {
    io::GzipWriter writer(6, threads);
    writer.write(raw);
    std::string out = writer.finish();
    benchmark::DoNotOptimize(out.data());
  }
  counters(state, in);
  state.counters["threads"] = threads;
}
BENCHMARK(BM_GzipWriter)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

// --- libprotobuf on the same message, for comparison ---

void BM_LibprotobufParse(benchmark::State& state) {
  const Input& in = input(state.range(0));
  for (auto _ : state) {
    perftools::profiles::Profile m;
    if (!m.ParseFromArray(in.raw.data(), static_cast<int>(in.raw.size())))
      return state.SkipWithError("libprotobuf cannot parse the message");
    benchmark::DoNotOptimize(m.sample_size());
  }
  counters(state, in);
}
BENCHMARK(BM_LibprotobufParse)->Arg(200'000)->Unit(benchmark::kMillisecond);

void BM_LibprotobufSerialize(benchmark::State& state) {
  const Input& in = input(state.range(0));
  perftools::profiles::Profile m;
  if (!m.ParseFromArray(in.raw.data(), static_cast<int>(in.raw.size())))
    return state.SkipWithError("libprotobuf cannot parse the message");
  for (auto _ : state) {
    std::string out = m.SerializeAsString();
    benchmark::DoNotOptimize(out.data());
  }
  counters(state, in);
}
BENCHMARK(BM_LibprotobufSerialize)->Arg(200'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
