// Stress (ctest -L stress, not in the default run): 16 threads doing malloc/free,
// dlopen/dlclose, fork, fork+exec and exceptions under libtally at 4000 Hz for 30 s (and
// the same program built with ASan, 10 s). A deadlock or a
// crash in the signal path shows as a time-out (the watchdog kills the run) or a signal;
// the profile must be one that tally and google/pprof read.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "runtime_test_support.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

TEST(ProfilerStress, SixteenThreadsOfMallocDlopenForkExecAt4000Hz) {
  TempDir dir;
  std::string profile = dir.file("stress.prof");
  RunResult result = run({STRESS_PROGRAM, "30", shared("fixtures/bin/libtallywork.so")},
                         {.environment = {{"LD_PRELOAD", runtime_library()},
                                          {"CPUPROFILE", profile},
                                          {"CPUPROFILE_FREQUENCY", "4000"}},
                          .timeout_seconds = 150 /* the watchdog */});
  ASSERT_FALSE(result.timed_out) << "deadlock: still running after 150 s\n" << result.describe();
  ASSERT_EQ(result.signal, 0) << result.describe();
  ASSERT_EQ(result.exit_code, 0) << result.describe();
  std::printf("%s", result.out.c_str());

  RunResult summary = run_tally({"cat", "--summary", profile});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  std::printf("%s", summary.out.c_str());
  // The CFI walk reaches the root of nearly every stack, the dlopened library's included
  // (only samples taken before the index caught up with a dlopen are cut).
  std::smatch cut;
  ASSERT_TRUE(std::regex_search(summary.out, cut, std::regex("tally\\.stacks_cut\\s+([0-9]+) of ([0-9]+)")))
      << summary.out;
  EXPECT_LE(std::stod(cut[1].str()), 0.05 * std::stod(cut[2].str())) << summary.out;
  RunResult top = run_tally({"top", profile});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_GT(parse_top(top.out).total_ms, 1000) << top.out;

  // The children's own profiles (PATH.PID) are complete files too; look at a few.
  int checked = 0;
  for (const std::string& name : list_directory(dir.path())) {
    if (name == "stress.prof") continue;
    // PATH.PID only: no temporary file left behind by any process.
    ASSERT_TRUE(std::regex_match(name, std::regex("stress\\.prof\\.[0-9]+"))) << name;
    if (checked++ < 5) {
      RunResult child = run_tally({"cat", "--summary", dir.file(name)});
      EXPECT_EQ(child.exit_code, 0) << name << ": " << child.err;
    }
  }
  std::printf("%d child profiles\n", checked);

  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  RunResult peer = run({pprof, "-top", STRESS_PROGRAM, profile});
  ASSERT_EQ(peer.exit_code, 0) << peer.err;
  EXPECT_GT(parse_top(peer.out).total_ms, 1000) << peer.out;
}

// libtally preloaded into an ASan-built program (ASan's allocator is locked while fork
// handlers run, and it intercepts dlopen, pthread_create and the unwinder's calls). The
// library's link order check is off: libtally comes before ASan's runtime.
TEST(ProfilerStress, AsanBuiltProgramAt4000Hz) {
  TempDir dir;
  std::string profile = dir.file("stress.prof");
  RunResult result = run({STRESS_PROGRAM_ASAN, "10", shared("fixtures/bin/libtallywork.so")},
                         {.environment = {{"LD_PRELOAD", runtime_library()},
                                          {"ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0"},
                                          {"CPUPROFILE", profile},
                                          {"CPUPROFILE_FREQUENCY", "4000"}},
                          .timeout_seconds = 120 /* the watchdog */});
  ASSERT_FALSE(result.timed_out) << "deadlock: still running after 120 s\n" << result.describe();
  ASSERT_EQ(result.signal, 0) << result.describe();
  ASSERT_EQ(result.exit_code, 0) << result.describe();
  EXPECT_EQ(result.err.find("AddressSanitizer"), std::string::npos) << result.err;
  RunResult top = run_tally({"top", profile});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_GT(parse_top(top.out).total_ms, 1000) << top.out;
}

}  // namespace
}  // namespace tally::test
