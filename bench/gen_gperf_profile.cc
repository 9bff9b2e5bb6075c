// gen_gperf_profile OUT [--records N] [--depth D] [--seed S] [--period-us P] [--functions F]:
// writes a synthetic gperftools
// CPU profile (see synthetic_profile.h) and prints what it holds, one "key value" per line,
// so that a benchmark can check a reader's totals against it.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "synthetic_profile.h"

int main(int argc, char** argv) {
  tally::bench::SyntheticOptions options;
  std::string out_path;
  CLI::App app("Write a synthetic gperftools CPU profile (64-bit little-endian) for benchmarks.");
  app.add_option("OUT", out_path, "output file")->required();
  app.add_option("--records", options.records, "stack records")->capture_default_str();
  app.add_option("--depth", options.depth, "PCs per record")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--seed", options.seed, "random seed; the same seed gives the same file")
      ->capture_default_str();
  app.add_option("--period-us", options.period_us, "sampling period in the header")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--functions", options.functions, "functions in the synthetic program")
      ->capture_default_str()
      ->check(CLI::Range(8u, 100000u));
  CLI11_PARSE(app, argc, argv);

  // Written beside the target and renamed, so an interrupted run leaves no partial file.
  const std::string tmp_path = out_path + ".tmp";
  std::FILE* f = std::fopen(tmp_path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "gen_gperf_profile: %s: %s\n", tmp_path.c_str(), std::strerror(errno));
    return 1;
  }
  bool write_failed = false;
  tally::bench::SyntheticStats stats;
  try {
    stats = tally::bench::write_synthetic_gperf_profile(
        options, [&](const uint8_t* data, size_t size) {
          write_failed |= std::fwrite(data, 1, size, f) != size;
        });
  } catch (const std::exception& e) {
    std::fclose(f);
    std::remove(tmp_path.c_str());
    std::fprintf(stderr, "gen_gperf_profile: %s\n", e.what());
    return 1;
  }
  write_failed |= std::fclose(f) != 0;
  if (write_failed || std::rename(tmp_path.c_str(), out_path.c_str()) != 0) {
    std::fprintf(stderr, "gen_gperf_profile: cannot write %s: %s\n", out_path.c_str(),
                 std::strerror(errno));
    std::remove(tmp_path.c_str());
    return 1;
  }
  std::printf("records %llu\nsamples %llu\ndistinct_stacks %llu\ndistinct_pcs %llu\nbytes %llu\n",
              static_cast<unsigned long long>(stats.records),
              static_cast<unsigned long long>(stats.samples),
              static_cast<unsigned long long>(stats.distinct_stacks),
              static_cast<unsigned long long>(stats.distinct_pcs),
              static_cast<unsigned long long>(stats.bytes));
  return 0;
}
