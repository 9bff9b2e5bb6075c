// tally_sprofil() and tally_profil() from libtally.so with real SIGPROF ticks: CPU burnt in
// functions whose code range is known lands in their regions, every thread counts, the
// interval in *tvp is the real one, calls replace and disable, a forked child keeps
// counting, other SIGPROF users are served. Tick counts are statistical: the assertions
// allow for it (a few ticks, a fraction of the expectation), never on timings.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <thread>

#include "burn.h"
#include "support/test_support.h"
#include "tally/profiler.h"
#include "tally/sprofil.h"

namespace tally::test {
namespace {

constexpr uint64_t kMs = 1'000'000;

uint64_t interval_ns(const timeval& tv) {
  return static_cast<uint64_t>(tv.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(tv.tv_usec) * 1000u;
}

// Ticks expected for `cpu_ns` of CPU time counted at `tick_ns`, within `tolerance` (a
// fraction) and 3 ticks.
void expect_ticks(uint64_t counted, uint64_t cpu_ns, uint64_t tick_ns, const char* what,
                  double tolerance = 0.25) {
  const double expected = static_cast<double>(cpu_ns) / static_cast<double>(tick_ns);
  EXPECT_NEAR(static_cast<double>(counted), expected, tolerance * expected + 3)
      << what << ": " << counted << " ticks for " << cpu_ns / kMs << " ms of CPU time at "
      << tick_ns / 1000 << " us a tick";
}

struct Off {
  ~Off() { tally_sprofil(nullptr, 0, nullptr, 0); }
};

// The ticks counted, times the interval *tvp gives, are the CPU time burnt: *tvp is the
// real sampling interval (the kernel tick: 4 ms at CONFIG_HZ=250, where glibc says 10 ms).
TEST(SprofilApi, IntervalTimesTicksIsTheCpuTime) {
  Off off;
  Histogram a(burn_a_range());
  uint16_t overflow = 0;
  prof entries[2] = {a.entry(), {}};
  entries[1].pr_base = &overflow;
  entries[1].pr_size = sizeof overflow;
  entries[1].pr_off = 0;
  entries[1].pr_scale = 2;
  timeval tv{};
  ASSERT_EQ(tally_sprofil(entries, 2, &tv, PROF_USHORT), 0);
  const uint64_t tick = interval_ns(tv);
  ASSERT_GT(tick, 0u);
  ASSERT_LE(tick, 10 * kMs);
  const uint64_t before = process_cpu_ns();
  burn_a(400 * kMs);
  const uint64_t cpu = process_cpu_ns() - before;
  ASSERT_EQ(tally_sprofil(nullptr, 0, nullptr, 0), 0);
  expect_ticks(a.total() + overflow, cpu, tick, "all ticks");
  // Nearly all of them in burn_a's code.
  EXPECT_GE(a.total(), (a.total() + overflow) * 9 / 10);
}

TEST(SprofilApi, EveryThreadsPcCounts) {
  Off off;
  Histogram a(burn_a_range()), b(burn_b_range());
  prof entries[2] = {a.entry(), b.entry()};
  timeval tv{};
  ASSERT_EQ(tally_sprofil(entries, 2, &tv, PROF_USHORT), 0);
  std::atomic<uint64_t> cpu_a{0}, cpu_b{0};
  std::thread ta([&] {
    const uint64_t t0 = thread_cpu_ns();
    burn_a(300 * kMs);
    cpu_a = thread_cpu_ns() - t0;
  });
  std::thread tb([&] {
    const uint64_t t0 = thread_cpu_ns();
    burn_b(200 * kMs);
    cpu_b = thread_cpu_ns() - t0;
  });
  ta.join();
  tb.join();
  ASSERT_EQ(tally_sprofil(nullptr, 0, nullptr, 0), 0);
  // Each thread's own ticks: one timer per thread. (A single process-wide timer, as
  // ITIMER_PROF is, gave one of two such threads a third of its ticks.) The tolerance
  // allows for a loaded machine.
  expect_ticks(a.total(), cpu_a, interval_ns(tv), "thread in burn_a", 0.35);
  expect_ticks(b.total(), cpu_b, interval_ns(tv), "thread in burn_b", 0.35);
}

// Threads started one after another while profiling: each gets its timer as it starts
// (libtally's pthread_create), and a timer left by an ended thread does not hide the next
// one. A thread's last tick, crossed after the kernel's last check before it ends, is
// lost: up to one tick per thread.
TEST(SprofilApi, ShortThreadsStartedDuringProfilingCount) {
  Off off;
  Histogram a(burn_a_range());
  prof one = a.entry();
  timeval tv{};
  ASSERT_EQ(tally_sprofil(&one, 1, &tv, PROF_USHORT), 0);
  constexpr int kThreads = 20;
  uint64_t cpu = 0;
  for (int i = 0; i < kThreads; ++i) {
    std::thread t([&] {
      const uint64_t t0 = thread_cpu_ns();
      burn_a(25 * kMs);
      cpu += thread_cpu_ns() - t0;
    });
    t.join();
  }
  ASSERT_EQ(tally_sprofil(nullptr, 0, nullptr, 0), 0);
  const uint64_t tick = interval_ns(tv);
  const uint64_t most = cpu / tick;
  EXPECT_LE(a.total(), most + most / 4 + 3);
  EXPECT_GE(a.total(), (most - kThreads) * 3 / 4)
      << a.total() << " ticks for " << cpu / kMs << " ms of CPU time in " << kThreads << " threads";
}

// "Each call to sprofil() disables profiling if it was enabled and then enables profiling
// of the regions specified": the buffers of the first call are not touched once the
// second has returned.
TEST(SprofilApi, NewCallReplacesTheRegions) {
  Off off;
  Histogram first(burn_a_range()), second(burn_b_range());
  prof one = first.entry(), two = second.entry();
  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);
  burn_a(100 * kMs);
  ASSERT_EQ(tally_sprofil(&two, 1, nullptr, PROF_USHORT), 0);
  const auto frozen = first.counters;
  EXPECT_GT(first.total(), 0u);
  burn_a(100 * kMs);
  burn_b(100 * kMs);
  ASSERT_EQ(tally_sprofil(nullptr, 0, nullptr, 0), 0);
  EXPECT_EQ(first.counters, frozen);
  EXPECT_GT(second.total(), 10u);
}

TEST(SprofilApi, ZeroCountOrNullArrayDisables) {
  Off off;
  Histogram a(burn_a_range());
  prof one = a.entry();
  timeval tv{};
  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);
  burn_a(50 * kMs);
  ASSERT_EQ(tally_sprofil(&one, 0, &tv, PROF_USHORT), 0);
  EXPECT_GT(interval_ns(tv), 0u);  // *tvp is set when disabling too
  auto frozen = a.counters;
  burn_a(100 * kMs);
  EXPECT_EQ(a.counters, frozen);

  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);
  burn_a(50 * kMs);
  ASSERT_EQ(tally_sprofil(nullptr, 3, nullptr, PROF_USHORT), 0);
  frozen = a.counters;
  burn_a(100 * kMs);
  EXPECT_EQ(a.counters, frozen);
}

// A failed call changes nothing: the regions of the last good call keep counting.
TEST(SprofilApi, InvalidCallFailsWithErrnoAndKeepsTheRegions) {
  Off off;
  Histogram a(burn_a_range());
  prof one = a.entry();
  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);
  prof bad = one;
  bad.pr_size = 3;
  errno = 0;
  EXPECT_EQ(tally_sprofil(&bad, 1, nullptr, PROF_USHORT), -1);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(tally_sprofil(&one, -1, nullptr, PROF_USHORT), -1);
  EXPECT_EQ(errno, E2BIG);
  errno = 0;
  EXPECT_EQ(tally_sprofil(&one, 1, nullptr, 1u << 5), -1);
  EXPECT_EQ(errno, EINVAL);
  burn_a(100 * kMs);
  EXPECT_GT(a.total(), 5u);
}

// "Profiling ... remains on in both child and parent processes after a fork()": the child
// counts into its copy of the counters.
TEST(SprofilApi, ForkedChildKeepsCounting) {
  Off off;
  Histogram a(burn_a_range());
  prof one = a.entry();
  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);
  const uint64_t at_fork = a.total();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    burn_a(150 * kMs);
    _exit(a.total() > at_fork + 10 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's counters did not grow";
}

// "Profiling is turned off when an exec() is executed": the timers go with the exec, and
// so must a tick still queued (pending signals survive exec, handlers do not, SIGPROF's
// default kills): the kernel drops the queued signals of POSIX timers at exec, which
// this checks. The child blocks SIGPROF while it burns CPU, so that ticks are surely
// pending at the exec; the new program unblocks it.
TEST(SprofilApi, ExecWithTicksPendingStartsTheNewProgram) {
  Off off;
  Histogram a(burn_a_range());
  prof one = a.entry();
  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sigset_t prof_only;
    sigemptyset(&prof_only);
    sigaddset(&prof_only, SIGPROF);
    sigprocmask(SIG_BLOCK, &prof_only, nullptr);
    burn_a(50 * kMs);
    sigset_t pending;
    sigpending(&pending);
    if (!sigismember(&pending, SIGPROF)) _exit(3);  // the test would prove nothing
    sigprocmask(SIG_UNBLOCK, &prof_only, nullptr);  // a tick arriving now is counted
    sigprocmask(SIG_BLOCK, &prof_only, nullptr);
    burn_a(20 * kMs);
    char* argv[] = {const_cast<char*>(UNBLOCK_SIGPROF_PROGRAM), nullptr};
    execv(UNBLOCK_SIGPROF_PROGRAM, argv);
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the new program was killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

std::atomic<int> g_foreign_calls{0};
std::atomic<int> g_foreign_kernel_ticks{0};
void count_foreign(int, siginfo_t* info, void*) {
  g_foreign_calls.fetch_add(1);
  if (info->si_code == SI_KERNEL) g_foreign_kernel_ticks.fetch_add(1);
}

// SIGPROF that is not tally's timer (kill, the program's own ITIMER_PROF) goes to the
// handler that was there before; tally's handler leaves when profiling stops.
TEST(SprofilApi, OtherSigprofGoesToThePreviousHandler) {
  Off off;
  struct sigaction mine {}, old{};
  mine.sa_sigaction = count_foreign;
  mine.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGPROF, &mine, &old), 0);
  g_foreign_calls = 0;
  g_foreign_kernel_ticks = 0;

  Histogram a(burn_a_range());
  prof one = a.entry();
  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);
  struct sigaction installed {};
  sigaction(SIGPROF, nullptr, &installed);
  EXPECT_NE(installed.sa_sigaction, count_foreign);
  for (int i = 0; i < 3; ++i) raise(SIGPROF);
  EXPECT_EQ(g_foreign_calls.load(), 3);

  itimerval every_ms{{0, 1000}, {0, 1000}}, off_timer{};
  ASSERT_EQ(setitimer(ITIMER_PROF, &every_ms, nullptr), 0);
  const uint64_t t0 = process_cpu_ns();
  burn_a(200 * kMs);
  const uint64_t cpu = process_cpu_ns() - t0;
  setitimer(ITIMER_PROF, &off_timer, nullptr);
  EXPECT_GT(g_foreign_kernel_ticks.load(), 10);  // the program's own timer still ticks
  ASSERT_EQ(tally_sprofil(nullptr, 0, nullptr, 0), 0);
  // tally counted its ticks only: the CPU time burnt, not those of the second timer too.
  timeval tv{};
  tally_sprofil(nullptr, 0, &tv, 0);
  expect_ticks(a.total(), cpu, interval_ns(tv), "tally's ticks beside ITIMER_PROF");

  sigaction(SIGPROF, nullptr, &installed);
  EXPECT_EQ(installed.sa_sigaction, count_foreign);
  sigaction(SIGPROF, &old, nullptr);
}

struct sigaction g_below_passer;
std::atomic<int> g_passer_calls{0};
// A well-behaved chaining handler: what is not its own goes to the action below it.
void pass_everything_down(int sig, siginfo_t* info, void* context) {
  g_passer_calls.fetch_add(1);
  if (g_below_passer.sa_flags & SA_SIGINFO) g_below_passer.sa_sigaction(sig, info, context);
}

// A handler installed over tally's, which passes signals down to it, and then tally's
// installed over that one (a new tally_sprofil call): a foreign SIGPROF goes round once
// (tally's, the other, tally's again, which sees it coming back) and ends.
TEST(SprofilApi, ChainLoopEndsWhenAHandlerPassesBackToTally) {
  Off off;
  Histogram a(burn_a_range());
  prof one = a.entry();
  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);
  struct sigaction passer {}, saved{};
  passer.sa_sigaction = pass_everything_down;
  passer.sa_flags = SA_SIGINFO;
  sigemptyset(&passer.sa_mask);
  ASSERT_EQ(sigaction(SIGPROF, &passer, &g_below_passer), 0);
  saved = g_below_passer;
  ASSERT_TRUE(saved.sa_flags & SA_SIGINFO);  // tally's handler is below
  ASSERT_EQ(tally_sprofil(&one, 1, nullptr, PROF_USHORT), 0);  // tally's on top again
  g_passer_calls = 0;
  raise(SIGPROF);
  EXPECT_EQ(g_passer_calls.load(), 1);
  burn_a(100 * kMs);  // tally's ticks still counted
  EXPECT_GT(a.total(), 5u);
  ASSERT_EQ(tally_sprofil(nullptr, 0, nullptr, 0), 0);
  sigaction(SIGPROF, &saved, nullptr);
}

// libtally's profiler (a real-time signal per thread) and sprofil (SIGPROF from a process
// CPU-time timer) at once: each gets its own ticks, sprofil's as many as alone.
TEST(SprofilApi, CoexistsWithTheProfilerInTheSameLibrary) {
  Off off;
  TempDir dir;
  const std::string file = dir.file("both.prof");
  ASSERT_NE(ProfilerStart(file.c_str()), 0);
  Histogram a(burn_a_range());
  prof one = a.entry();
  timeval tv{};
  ASSERT_EQ(tally_sprofil(&one, 1, &tv, PROF_USHORT), 0);
  const uint64_t t0 = process_cpu_ns();
  burn_a(300 * kMs);
  const uint64_t cpu = process_cpu_ns() - t0;
  ASSERT_EQ(tally_sprofil(nullptr, 0, nullptr, 0), 0);
  ProfilerStop();
  expect_ticks(a.total(), cpu, interval_ns(tv), "sprofil beside the profiler");
  // The profiler's file holds its own samples, the CPU time at its 100 Hz default.
  RunResult summary = run_tally({"cat", "--summary", file});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  const size_t at = summary.out.find("total samples");
  ASSERT_NE(at, std::string::npos) << summary.out;
  const uint64_t samples = std::stoull(summary.out.substr(at + 13));
  expect_ticks(samples, cpu, 10 * kMs, "the profiler beside sprofil");
}

// profil(3): one region of 16-bit counters; NULL, scale 0 or 1 turn it off.
TEST(ProfilApi, CountsOneRegionAndTurnsOff) {
  Off off;
  Histogram a(burn_a_range());
  ASSERT_EQ(tally_profil(a.counters.data(), a.counters.size() * 2, a.range.start, 65536), 0);
  burn_a(100 * kMs);
  EXPECT_GT(a.total(), 10u);
  for (unsigned scale : {0u, 1u}) {
    ASSERT_EQ(tally_profil(a.counters.data(), a.counters.size() * 2, a.range.start, 65536), 0);
    ASSERT_EQ(tally_profil(a.counters.data(), a.counters.size() * 2, a.range.start, scale), 0);
    const auto frozen = a.counters;
    burn_a(50 * kMs);
    EXPECT_EQ(a.counters, frozen) << "scale " << scale;
  }
  ASSERT_EQ(tally_profil(a.counters.data(), a.counters.size() * 2, a.range.start, 65536), 0);
  ASSERT_EQ(tally_profil(nullptr, 0, 0, 0), 0);
  const auto frozen = a.counters;
  burn_a(50 * kMs);
  EXPECT_EQ(a.counters, frozen);
}

}  // namespace
}  // namespace tally::test
