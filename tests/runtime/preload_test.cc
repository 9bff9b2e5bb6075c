// libtally.so preloaded into programs that know nothing of it, driven by gperftools'
// environment variables: CPUPROFILE (children append .PID), CPUPROFILE_FREQUENCY,
// CPUPROFILE_REALTIME, CPUPROFILE_PER_THREAD_TIMERS, CPUPROFILESIGNAL; pprof output for
// *.pb.gz; profiles written atomically, at exit, and never by a forked copy into its
// parent's file.
#include <gtest/gtest.h>

#include <signal.h>

#include <regex>
#include <string>

#include "runtime_test_support.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

constexpr double kToleranceMs = 30;

// The frames libtally gives the CPU time no sample of the program can show (own_time.h).
double own_frames_ms(const TopTable& table) {
  return cum_ms(table, "[tally: sampling]") + cum_ms(table, "[tally: writing the profile]") +
         cum_ms(table, "[not profiled: process start-up]");
}

class PreloadTest : public ::testing::Test {
 protected:
  RunResult run_workload(const std::string& mode, Environment environment) {
    environment.emplace_back("LD_PRELOAD", runtime_library());
    environment.emplace_back("CPUPROFILE_FREQUENCY", "1000");
    return run({WORKLOAD_PROGRAM, mode},
               {.cwd = dir_.path(), .environment = environment, .timeout_seconds = 60});
  }

  static TopTable top(const std::string& profile) { return tally_top(profile); }
  static double cum(const TopTable& table, const std::string& function) {
    return cum_ms(table, function);
  }

  // The "child PID" lines the workload prints.
  static std::vector<std::string> children(const std::string& out) {
    std::vector<std::string> pids;
    std::regex line("child ([0-9]+)");
    for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it) {
      pids.push_back((*it)[1]);
    }
    return pids;
  }

  TempDir dir_;
};

TEST_F(PreloadTest, EveryThreadOfAnUnmodifiedProgramIsProfiled) {
  RunResult run = run_workload("threads", {{"CPUPROFILE", "threads.prof"}});
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  TopTable table = top(dir_.file("threads.prof"));
  EXPECT_NEAR(cum(table, "main_work"), 200, kToleranceMs);
  EXPECT_NEAR(cum(table, "thread_work"), 3 * 200, 3 * kToleranceMs);
  // gperftools' closing line on stderr.
  EXPECT_NE(run.err.find("PROFILE: interrupts/evictions/bytes = "), std::string::npos) << run.err;
}

TEST_F(PreloadTest, ExitFromAnotherThreadWritesTheProfile) {
  RunResult run = run_workload("exit", {{"CPUPROFILE", "exit.prof"}});
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  EXPECT_NEAR(cum(top(dir_.file("exit.prof")), "exit_work"), 300, kToleranceMs);
}

TEST_F(PreloadTest, ForkedChildWritesPathDotPidAndNeverTheParentsFile) {
  RunResult run = run_workload("fork", {{"CPUPROFILE", "fork.prof"}});
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  std::vector<std::string> pids = children(run.out);
  ASSERT_EQ(pids.size(), 1u) << run.out;
  EXPECT_EQ(list_directory(dir_.path()),
            (std::vector<std::string>{"fork.prof", "fork.prof." + pids[0]}));
  TopTable parent = top(dir_.file("fork.prof"));
  EXPECT_NEAR(cum(parent, "parent_work"), 400, kToleranceMs);
  EXPECT_EQ(cum(parent, "child_work"), 0);
  TopTable child = top(dir_.file("fork.prof." + pids[0]));
  EXPECT_NEAR(cum(child, "child_work"), 300, kToleranceMs);
  EXPECT_EQ(cum(child, "parent_work"), 0);  // the parent's samples it inherited are dropped
  // The child is profiled without a thread of libtally's: it stays single-threaded.
  EXPECT_NE(run.out.find("child threads 1\n"), std::string::npos) << run.out;
}

// A forked child's exit writes its profile and gperftools' closing line without malloc:
// the program's allocator may be locked in the child (ASan's was, and the stress test's
// child hung in that line).
TEST_F(PreloadTest, AForkedChildExitsWithoutAllocating) {
  RunResult run = test::run({FORK_MALLOC_GUARD},
                            {.cwd = dir_.path(),
                             .environment = {{"LD_PRELOAD", runtime_library()},
                                             {"CPUPROFILE", "guard.prof"},
                                             {"CPUPROFILE_FREQUENCY", "1000"}},
                             .timeout_seconds = 60});
  EXPECT_EQ(run.exit_code, 0) << run.describe();
  EXPECT_NE(run.out.find("child exit 0"), std::string::npos) << run.describe();
  EXPECT_EQ(run.err.find("malloc in the exiting child"), std::string::npos) << run.err;
  // Both closing lines were written, and both profiles.
  size_t lines = 0;
  for (size_t at = 0; (at = run.err.find("PROFILE: interrupts/evictions/bytes", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 2u) << run.err;
  EXPECT_GT(cum(top(dir_.file("guard.prof")), "main"), 0) << run.describe();
}

TEST_F(PreloadTest, ExecutedChildrenAppendTheirPid) {
  RunResult run = run_workload("exec", {{"CPUPROFILE", "exec.prof"}});
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  std::vector<std::string> pids = children(run.out);
  ASSERT_EQ(pids.size(), 2u) << run.out;
  EXPECT_EQ(list_directory(dir_.path()),
            (std::vector<std::string>{"exec.prof", "exec.prof." + pids[0], "exec.prof." + pids[1]}));
  EXPECT_NEAR(cum(top(dir_.file("exec.prof")), "parent_work"), 200, kToleranceMs);
  for (const std::string& pid : pids) {
    EXPECT_NEAR(cum(top(dir_.file("exec.prof." + pid)), "child_work"), 300, kToleranceMs);
  }
}

TEST_F(PreloadTest, ProfileSignalTogglesNumberedProfiles) {
  RunResult run = run_workload("toggle", {{"CPUPROFILE", "toggle.prof"},
                                           {"CPUPROFILESIGNAL", std::to_string(SIGUSR2)}});
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  EXPECT_EQ(list_directory(dir_.path()), (std::vector<std::string>{"toggle.prof.0", "toggle.prof.1"}));
  TopTable first = top(dir_.file("toggle.prof.0"));
  TopTable second = top(dir_.file("toggle.prof.1"));
  EXPECT_NEAR(cum(first, "first_window_work"), 300, kToleranceMs);
  EXPECT_NEAR(cum(second, "second_window_work"), 300, kToleranceMs);
  for (const TopTable* table : {&first, &second}) {
    EXPECT_EQ(cum(*table, "untoggled_work"), 0);
    EXPECT_EQ(cum(*table, "between_work"), 0);
    EXPECT_EQ(cum(*table, "after_work"), 0);
  }
  EXPECT_EQ(cum(first, "second_window_work"), 0);
  EXPECT_EQ(cum(second, "first_window_work"), 0);
}

TEST_F(PreloadTest, RealtimeSamplesWallClockTime) {
  RunResult cpu = run_workload("sleep", {{"CPUPROFILE", "cpu.prof"}});
  RunResult wall = run_workload("sleep", {{"CPUPROFILE", "wall.prof"}, {"CPUPROFILE_REALTIME", "1"}});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.describe();
  ASSERT_EQ(wall.exit_code, 0) << wall.describe();
  TopTable cpu_table = top(dir_.file("cpu.prof"));
  TopTable wall_table = top(dir_.file("wall.prof"));
  // CPU time: the busy part only (sleeping uses none), beside libtally's own frames.
  EXPECT_NEAR(cum(cpu_table, "busy_work"), 200, kToleranceMs);
  EXPECT_LT(cpu_table.total_ms - cum(cpu_table, "busy_work") - own_frames_ms(cpu_table), 20);
  // Wall-clock time: the 0.4 s asleep (in nanosleep, under main) too, and all of the run
  // (busy_work may take longer than its 0.2 s of CPU on a loaded machine).
  EXPECT_GT(wall_table.total_ms - cum(wall_table, "busy_work"), 400 - kToleranceMs);
  EXPECT_NEAR(wall_table.total_ms, wall.wall_seconds * 1000, 0.15 * wall.wall_seconds * 1000);
}

// CPU time the process used before libtally's constructor armed the timers (here a library
// constructor that the loader runs first) is part of a whole-run profile, in a frame of its
// own: the total is what wait4 reports, and no function is credited with time never sampled.
TEST_F(PreloadTest, StartUpBeforeSamplingIsCountedInAFrameOfItsOwn) {
  Environment preload_first{{"LD_PRELOAD", runtime_library() + ":" + BURN_AT_LOAD_LIBRARY},
                            {"CPUPROFILE_FREQUENCY", "1000"}};
  Environment with_burn = preload_first;
  with_burn.emplace_back("CPUPROFILE", "start-up.prof");
  RunResult burnt = run({WORKLOAD_PROGRAM, "sleep"},
                        {.cwd = dir_.path(), .environment = with_burn, .timeout_seconds = 60});
  ASSERT_EQ(burnt.exit_code, 0) << burnt.describe();
  Environment without_burn = preload_first;
  without_burn.emplace_back("CPUPROFILE", "plain.prof");
  without_burn.emplace_back("BURN_AT_LOAD_SECONDS", "0");
  RunResult plain = run({WORKLOAD_PROGRAM, "sleep"},
                        {.cwd = dir_.path(), .environment = without_burn, .timeout_seconds = 60});
  ASSERT_EQ(plain.exit_code, 0) << plain.describe();

  TopTable table = top(dir_.file("start-up.prof"));
  EXPECT_NEAR(cum(table, "[not profiled: process start-up]"), 200, kToleranceMs);
  EXPECT_EQ(cum(table, "load_work"), 0);  // never sampled: the frame stands for it
  EXPECT_NEAR(cum(table, "busy_work"), 200, kToleranceMs);
  const double cpu_ms = burnt.cpu_seconds() * 1000;
  EXPECT_NEAR(table.total_ms, cpu_ms, 0.05 * cpu_ms);
  // The control: the same program without the constructor's work starts in a few ms.
  EXPECT_LT(cum(top(dir_.file("plain.prof")), "[not profiled: process start-up]"), 20);
}

// Per-thread POSIX CPU timers, the fallback where perf_event_open is refused: they fire
// on the kernel tick only (250/s here), yet the counts still add up to the CPU time.
TEST_F(PreloadTest, PerThreadTimersGiveHonestCountsAboveTheTickRate) {
  RunResult run = run_workload("threads", {{"CPUPROFILE", "timers.prof"},
                                            {"CPUPROFILE_PER_THREAD_TIMERS", "1"},
                                            {"CPUPROFILE_FREQUENCY", "4000"}});
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  TopTable table = top(dir_.file("timers.prof"));
  EXPECT_NEAR(cum(table, "main_work"), 200, kToleranceMs);
  EXPECT_NEAR(cum(table, "thread_work"), 3 * 200, 3 * kToleranceMs);
}

// libtally_pprof.so is not built in sanitizer builds (its static libraries would be
// instrumented): the test does not exist there, rather than skip.
#ifdef TALLY_HAVE_PPROF_MODULE
TEST_F(PreloadTest, PbGzNameWritesPprofThatPprofReads) {
  RunResult run = run_workload("threads", {{"CPUPROFILE", "threads.pb.gz"}});
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  std::vector<uint8_t> bytes = read_bytes(dir_.file("threads.pb.gz"));
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(bytes[0], 0x1f);  // gzip
  EXPECT_EQ(bytes[1], 0x8b);
  RunResult summary = run_tally({"cat", "--summary", dir_.file("threads.pb.gz")});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("pprof"), std::string::npos) << summary.out;
  EXPECT_NEAR(cum(top(dir_.file("threads.pb.gz")), "thread_work"), 600, 3 * kToleranceMs);

  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  RunResult peer =
      tally::test::run({pprof, "-top", "-nodecount=1000", WORKLOAD_PROGRAM, dir_.file("threads.pb.gz")});
  ASSERT_EQ(peer.exit_code, 0) << peer.err;
  EXPECT_NEAR(parse_top(peer.out).cum_ms["thread_work"], 600, 3 * kToleranceMs) << peer.out;
}
#endif  // TALLY_HAVE_PPROF_MODULE

TEST_F(PreloadTest, UnwritableDirectoryIsReportedAndTheProgramRunsOn) {
  RunResult run = run_workload("threads", {{"CPUPROFILE", "/nonexistent-dir/x.prof"}});
  EXPECT_EQ(run.exit_code, 0) << run.describe();
  EXPECT_NE(run.err.find("/nonexistent-dir/x.prof"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace tally::test
