// The split workload (func_a/b/c/d do 4/3/2/1 units of work, about 40/30/20/10 % of the CPU
// time) under LD_PRELOAD=libtally.so at 100, 1000 and 4000 Hz, with 1 and 8 threads (on 2
// cores): google/pprof's -top must show the split within 2 percentage points and a total
// within 5% of the CPU time the kernel accounted to the process (wait4's rusage). The same
// runs under gperftools' libprofiler are printed beside, for comparison only: its setitimer
// signals come at most once per kernel tick, so above the tick rate it under-reports.
//
// The truth is the split of CPU time the program measured around each call (its thread's
// own clock), not the split of iterations: on CI's shared machine an iteration's time
// changes during a run, and that is not the profiler's error.
//
// Samples are stratified (one per period of a thread's CPU time), so only the periods that
// straddle a call's start or end are uncertain: at most one sample per call. When a round
// lasts a whole number of periods, every round has the same phase and these errors add up
// instead of averaging out (0.25 s rounds at 100 Hz once read func_d 12.2% for 10%: 3 of
// 2.5 samples in each of 8 rounds). So the calls per function stay below 1% of the samples.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime_test_support.h"
#include "support/measured_split.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

// Iterations per unit of work (a round is 10 units); measured_split does about 0.8 per ns.
constexpr const char* UNIT_100MS = "80000000";
constexpr const char* UNIT_25MS = "20000000";
constexpr const char* UNIT_15MS = "12000000";
constexpr const char* UNIT_10MS = "8000000";

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
  std::map<std::string, double> true_pct;  // function -> its measured share of CPU time
  std::map<std::string, double> true_ms;   // function -> the CPU time it measured
};


Measured profile_split(const std::string& library, const SplitRun& split, const TempDir& dir,
                       const std::string& pprof) {
  std::string profile = dir.file(std::to_string(split.frequency) + "-" +
                                 std::to_string(split.threads) + ".prof");
  Measured measured;
  measured.run = run({measured_split_program(), "-r", split.rounds, "-u", split.unit, "-t",
                      std::to_string(split.threads)},
                     {.environment = {{"LD_PRELOAD", library},
                                      {"CPUPROFILE", profile},
                                      {"CPUPROFILE_FREQUENCY", std::to_string(split.frequency)}},
                      .timeout_seconds = 240});
  RunResult top = run({pprof, "-top", "-nodecount=100", measured_split_program(), profile});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  measured.table = parse_top(top.out);
  measured.true_pct = measured_split_shares(measured.run.out);
  measured.true_ms = measured_split_ms(measured.run.out);
  return measured;
}

double flat_ms(const TopTable& table, const std::string& function) {
  auto it = table.flat_ms.find(function);
  return it == table.flat_ms.end() ? 0.0 : it->second;
}

// A function's share of the four functions' time. libtally gives the cost of sampling a
// frame of its own ([tally: sampling]), while the program's clocks around each call
// include the samples taken in it: the shares among the four are what both measure alike.
double work_share(const TopTable& table, const std::string& function) {
  double work = 0;
  for (const char* f : {"func_a", "func_b", "func_c", "func_d"}) work += flat_ms(table, f);
  return work > 0 ? 100 * flat_ms(table, function) / work : 0.0;
}

std::string figures(const Measured& m) {
  char line[256];
  auto pct = [&](const char* f) { return work_share(m.table, f); };
  auto truth = [&](const char* f) {
    auto it = m.true_pct.find(f);
    return it == m.true_pct.end() ? 0.0 : it->second;
  };
  std::snprintf(line, sizeof line,
                "profile %.0f ms of %.0f ms CPU (%.1f%%; sampling %.1f ms, start-up %.1f ms), "
                "split %.1f/%.1f/%.1f/%.1f (measured %.1f/%.1f/%.1f/%.1f)",
                m.table.total_ms, m.run.cpu_seconds() * 1000,
                100 * m.table.total_ms / (m.run.cpu_seconds() * 1000),
                flat_ms(m.table, "[tally: sampling]"),
                flat_ms(m.table, "[not profiled: process start-up]"), pct("func_a"),
                pct("func_b"), pct("func_c"), pct("func_d"), truth("func_a"), truth("func_b"),
                truth("func_c"), truth("func_d"));
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
  for (const char* function : {"func_a", "func_b", "func_c", "func_d"}) {
    EXPECT_NEAR(work_share(tally.table, function), tally.true_pct[function], 2.0)
        << function << "\n"
        << figures(tally);
  }
  double cpu_ms = tally.run.cpu_seconds() * 1000;
  EXPECT_NEAR(tally.table.total_ms, cpu_ms, 0.05 * cpu_ms) << figures(tally);
  // The functions' clocks include the samples taken in them: in the profile, that cost is
  // [tally: sampling]'s. Work and sampling together are what the clocks measured.
  double work_ms = 0, measured_ms = 0;
  for (const char* function : {"func_a", "func_b", "func_c", "func_d"}) {
    work_ms += flat_ms(tally.table, function);
    measured_ms += tally.true_ms[function];
  }
  EXPECT_NEAR(work_ms + flat_ms(tally.table, "[tally: sampling]"), measured_ms, 0.02 * measured_ms)
      << figures(tally);

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
    // Calls per function (rounds x threads) below 1% of the samples; see the top.
    ::testing::Values(SplitRun{100, 1, UNIT_100MS, "2"},   // 2 s: 200 samples, 2 calls
                      SplitRun{100, 8, UNIT_100MS, "1"},   // 8 s on 2 cores: 800, 8
                      SplitRun{1000, 1, UNIT_25MS, "4"},   // 1 s: 1000, 4
                      SplitRun{1000, 8, UNIT_15MS, "2"},   // 2.4 s: 2400, 16
                      SplitRun{4000, 1, UNIT_10MS, "5"},   // 0.5 s: 2000, 5
                      SplitRun{4000, 8, UNIT_10MS, "2"}),  // 1.6 s: 6400, 16
    name);

// Two processes that only spin, as many as CI's cores: the profiled program then shares
// the CPUs and is preempted often, which is where a profiler's total can drift from the CPU
// time the kernel accounts (issue 20: within 5% at 4000 Hz on a machine loaded like this).
class BusyLoops {
 public:
  explicit BusyLoops(int count) {
    for (int i = 0; i < count; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
        volatile unsigned long spin = 0;
        for (;;) spin = spin + 1;
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyLoops() {
    for (pid_t pid : pids_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  size_t running() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

TEST(LoadedMachineAccuracy, TotalWithinFivePercentOfTheCpuAt4000HzBesideTwoBusyLoops) {
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  BusyLoops load(2);
  ASSERT_EQ(load.running(), 2u);
  TempDir dir;
  Measured tally = profile_split(runtime_library(), SplitRun{4000, 1, UNIT_10MS, "5"}, dir, pprof);
  ASSERT_EQ(tally.run.exit_code, 0) << tally.run.describe();
  std::printf("libtally beside 2 busy loops, 4000 Hz: %s\n", figures(tally).c_str());
  double cpu_ms = tally.run.cpu_seconds() * 1000;
  EXPECT_NEAR(tally.table.total_ms, cpu_ms, 0.05 * cpu_ms) << figures(tally);
  for (const char* function : {"func_a", "func_b", "func_c", "func_d"})
    EXPECT_NEAR(work_share(tally.table, function), tally.true_pct[function], 2.0)
        << function << "\n"
        << figures(tally);
}

}  // namespace
}  // namespace tally::test
