// gen_pprof_profile OUT [--draws N] [--min-depth D] [--max-depth D] [--seed S]
// [--functions F] [--gzip-level L]: writes a synthetic gzipped pprof CPU profile (see
// synthetic_pprof.h) and prints what it holds, one "key value" per line, so that a
// benchmark can check a reader's result against it.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "synthetic_pprof.h"

int main(int argc, char** argv) {
  tally::bench::SyntheticPprofOptions options;
  std::string out_path;
  CLI::App app("Write a synthetic gzipped pprof CPU profile for benchmarks.");
  app.add_option("OUT", out_path, "output file")->required();
  app.add_option("--draws", options.draws, "stacks sampled (repeats are summed)")
      ->capture_default_str();
  app.add_option("--min-depth", options.min_depth, "fewest frames per stack")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--max-depth", options.max_depth, "most frames per stack")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--seed", options.seed, "random seed; the same seed gives the same file")
      ->capture_default_str();
  app.add_option("--functions", options.functions, "functions in the synthetic program")
      ->capture_default_str()
      ->check(CLI::Range(8u, 100000u));
  app.add_option("--gzip-level", options.gzip_level, "zlib level")
      ->capture_default_str()
      ->check(CLI::Range(1, 9));
  CLI11_PARSE(app, argc, argv);

  tally::bench::SyntheticPprofStats stats;
  std::string bytes;
  try {
    bytes = tally::bench::synthetic_pprof_profile(options, &stats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gen_pprof_profile: %s\n", e.what());
    return 1;
  }
  // Written beside the target and renamed, so an interrupted run leaves no partial file.
  const std::string tmp_path = out_path + ".tmp";
  std::FILE* f = std::fopen(tmp_path.c_str(), "wb");
  bool failed = !f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size();
  failed |= f && std::fclose(f) != 0;
  if (failed || std::rename(tmp_path.c_str(), out_path.c_str()) != 0) {
    std::fprintf(stderr, "gen_pprof_profile: cannot write %s: %s\n", out_path.c_str(),
                 std::strerror(errno));
    std::remove(tmp_path.c_str());
    return 1;
  }
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("samples %llu\ntotal_count %llu\nlocations %llu\nfunctions %llu\nmappings %llu\n"
              "raw_bytes %llu\nbytes %llu\n",
              u(stats.samples), u(stats.total_count), u(stats.locations), u(stats.functions),
              u(stats.mappings), u(stats.raw_bytes), u(stats.bytes));
  return 0;
}
