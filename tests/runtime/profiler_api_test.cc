// The gperftools C API of libtally, through a program written for gperftools
// (programs/profiler_api_program.c) built unchanged against tally's header and -ltally.
// The program checks what the API reports; these tests check what is in the profiles,
// with `tally top` (symbolized from the program's binary).
#include <gtest/gtest.h>

#include <string>

#include "runtime_test_support.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

// CPU time of a burn (the program burns exactly this much thread CPU time per call) and
// how far a profile's figure may be from it: the sampling period (1 ms at 1000 Hz) at each
// end, and the little time spent outside the named function.
constexpr double kBurnMs = 300;
constexpr double kToleranceMs = 30;

class ProfilerApiTest : public ::testing::Test {
 protected:
  RunResult run_mode(const std::string& mode, const std::string& profile,
                     const std::string& program = PROFILER_API_PROGRAM_TALLY) {
    return run({program, mode, profile},
               {.environment = {{"CPUPROFILE_FREQUENCY", "1000"}}, .timeout_seconds = 60});
  }

  // Milliseconds by function (flat + anything called from it: cum), from tally top.
  static TopTable top(const std::string& profile) { return tally_top(profile); }
  static double cum(const TopTable& table, const std::string& function) {
    return cum_ms(table, function);
  }

  TempDir dir_;
};

TEST_F(ProfilerApiTest, StateFollowsStartAndStop) {
  std::string profile = dir_.file("state.prof");
  RunResult run = run_mode("state", profile);
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  EXPECT_EQ(run.out, "ok\n");
  TopTable table = top(profile);
  EXPECT_NEAR(cum(table, "main_work"), kBurnMs, kToleranceMs);
}

TEST_F(ProfilerApiTest, FlushMakesTheFileACompleteProfileOfWhatWasGathered) {
  std::string profile = dir_.file("flush.prof");
  RunResult run = run_mode("flush", profile);
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  TopTable flushed = top(profile + ".flushed");
  EXPECT_NEAR(cum(flushed, "before_flush_work"), kBurnMs, kToleranceMs);
  EXPECT_EQ(cum(flushed, "after_flush_work"), 0);
  TopTable final_profile = top(profile);
  EXPECT_NEAR(cum(final_profile, "before_flush_work"), kBurnMs, kToleranceMs);
  EXPECT_NEAR(cum(final_profile, "after_flush_work"), kBurnMs, kToleranceMs);
}

TEST_F(ProfilerApiTest, FilterInThreadKeepsOnlyTheThreadsItAccepts) {
  std::string profile = dir_.file("filter.prof");
  RunResult run = run_mode("filter", profile);
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  TopTable table = top(profile);
  EXPECT_NEAR(cum(table, "kept_work"), kBurnMs, kToleranceMs);
  EXPECT_EQ(cum(table, "filtered_work"), 0);
}

TEST_F(ProfilerApiTest, EveryThreadIsProfiledWithoutRegistering) {
  std::string profile = dir_.file("threads.prof");
  RunResult run = run_mode("threads", profile);
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  TopTable table = top(profile);
  // Started before ProfilerStart, after it, and one that registered itself (accepted).
  EXPECT_NEAR(cum(table, "early_thread_work"), kBurnMs, kToleranceMs);
  EXPECT_NEAR(cum(table, "late_thread_work"), kBurnMs, kToleranceMs);
  EXPECT_NEAR(cum(table, "registered_work"), kBurnMs, kToleranceMs);
}

TEST_F(ProfilerApiTest, ForkedChildNeverWritesIntoItsParentsFile) {
  std::string profile = dir_.file("fork.prof");
  RunResult run = run_mode("fork", profile);
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  TopTable table = top(profile);
  EXPECT_NEAR(cum(table, "parent_work"), 2 * 200.0, kToleranceMs);
  EXPECT_EQ(cum(table, "child_work"), 0);
  // The child's copy of a session started by the API is dropped: no file of its own.
  EXPECT_EQ(list_directory(dir_.path()), std::vector<std::string>{"fork.prof"});
}

TEST_F(ProfilerApiTest, ASecondSessionWritesItsOwnFile) {
  std::string profile = dir_.file("restart.prof");
  RunResult run = run_mode("restart", profile);
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  TopTable first = top(profile + ".1");
  TopTable second = top(profile + ".2");
  EXPECT_NEAR(cum(first, "first_work"), 200, kToleranceMs);
  EXPECT_EQ(cum(first, "second_work"), 0);
  EXPECT_NEAR(cum(second, "second_work"), 200, kToleranceMs);
  EXPECT_EQ(cum(second, "first_work"), 0);
}

TEST_F(ProfilerApiTest, ExitWithoutStopStillWritesTheProfile) {
  std::string profile = dir_.file("exit.prof");
  RunResult run = run_mode("exit", profile);
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  EXPECT_NEAR(cum(top(profile), "exit_work"), kBurnMs, kToleranceMs);
}

TEST_F(ProfilerApiTest, GetStackTraceFromTheCallerAndFromASignalHandler) {
  RunResult run = run_mode("stack", dir_.file("unused.prof"));
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  EXPECT_EQ(run.out, "ok\n");
}

}  // namespace
}  // namespace tally::test
