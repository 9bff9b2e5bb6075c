// The split workload (func_a/b/c/d burn 40/30/20/10 % of the CPU time) under
// LD_PRELOAD=libtally.so at 100, 1000 and 4000 Hz, with 1 and 8 threads (on 2 cores):
// google/pprof's -top must show the split within 2 percentage points and a total within 5%
// of the CPU time the kernel accounted to the process (wait4's rusage). The same runs under
// gperftools' libprofiler are printed beside, for comparison only: its setitimer signals
// come at most once per kernel tick, so above the tick rate it under-reports.
//
// The split's rounds are sized so that sampling error cannot reach 2 pp: each round is
// many sampling periods long (samples are stratified, one per period, so only the periods
// that straddle a function boundary are uncertain).
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>

#include "runtime_test_support.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

struct SplitRun {
  int frequency;
  int threads;
  std::string unit;    // iterations per unit of work (a round is 10 units)
  std::string rounds;  // per thread
};

void PrintTo(const SplitRun& split, std::ostream* out) {
  *out << split.frequency << " Hz, " << split.threads << " thread(s), split -r " << split.rounds
       << " -u " << split.unit;
}

std::string name(const ::testing::TestParamInfo<SplitRun>& info) {
  return std::to_string(info.param.frequency) + "Hz_" + std::to_string(info.param.threads) +
         "threads";
}

struct Measured {
  RunResult run;
  TopTable table;
};

Measured profile_split(const std::string& library, const SplitRun& split, const TempDir& dir,
                       const std::string& pprof) {
  std::string profile = dir.file(std::to_string(split.frequency) + "-" +
                                 std::to_string(split.threads) + ".prof");
  Measured measured;
  measured.run = run({split_binary(), "-r", split.rounds, "-u", split.unit, "-t",
                      std::to_string(split.threads)},
                     {.environment = {{"LD_PRELOAD", library},
                                      {"CPUPROFILE", profile},
                                      {"CPUPROFILE_FREQUENCY", std::to_string(split.frequency)}},
                      .timeout_seconds = 240});
  RunResult top = run({pprof, "-top", "-nodecount=100", split_binary(), profile});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  measured.table = parse_top(top.out);
  return measured;
}

std::string figures(const Measured& m) {
  char line[256];
  auto pct = [&](const char* f) {
    auto it = m.table.flat_pct.find(f);
    return it == m.table.flat_pct.end() ? 0.0 : it->second;
  };
  std::snprintf(line, sizeof line, "profile %.0f ms of %.0f ms CPU (%.1f%%), split %.1f/%.1f/%.1f/%.1f",
                m.table.total_ms, m.run.cpu_seconds() * 1000,
                100 * m.table.total_ms / (m.run.cpu_seconds() * 1000), pct("func_a"),
                pct("func_b"), pct("func_c"), pct("func_d"));
  return line;
}

class SplitAccuracyTest : public ::testing::TestWithParam<SplitRun> {};

TEST_P(SplitAccuracyTest, PprofShowsTheSplitAndTheCpuTime) {
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  const SplitRun& split = GetParam();
  TempDir dir;
  Measured tally = profile_split(runtime_library(), split, dir, pprof);
  ASSERT_EQ(tally.run.exit_code, 0) << tally.run.describe();
  std::printf("libtally     %5d Hz %d thread(s): %s\n", split.frequency, split.threads,
              figures(tally).c_str());
  const double expected[] = {40, 30, 20, 10};
  const char* functions[] = {"func_a", "func_b", "func_c", "func_d"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(tally.table.flat_pct[functions[i]], expected[i], 2.0) << functions[i] << "\n"
                                                                      << figures(tally);
  }
  double cpu_ms = tally.run.cpu_seconds() * 1000;
  EXPECT_NEAR(tally.table.total_ms, cpu_ms, 0.05 * cpu_ms) << figures(tally);

  std::string gperftools = gperftools_library();
  if (!gperftools.empty()) {
    TempDir peer_dir;
    Measured peer = profile_split(gperftools, split, peer_dir, pprof);
    std::printf("libprofiler  %5d Hz %d thread(s): %s\n", split.frequency, split.threads,
                figures(peer).c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Split, SplitAccuracyTest,
    // Several rounds at every rate: the truth is a split of iterations, so a change in the
    // machine's load during a run (CI runs two tests at once) must fall on every function
    // alike, not on func_a's stretch alone (one 1 s round per thread once read 36.7/33.6).
    ::testing::Values(SplitRun{100, 1, "25000000", "8"},    // 0.25 s rounds, 2 s
                      SplitRun{100, 8, "25000000", "4"},    // 0.25 s rounds, 8 s on 2 cores
                      SplitRun{1000, 1, "10000000", "10"},  // 0.1 s rounds, 1 s
                      SplitRun{1000, 8, "10000000", "3"},
                      SplitRun{4000, 1, "2000000", "25"},   // 20 ms rounds, 0.5 s
                      SplitRun{4000, 8, "2000000", "10"}),
    name);

}  // namespace
}  // namespace tally::test
