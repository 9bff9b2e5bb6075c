// `tally record` on workloads that measure the CPU time each of their functions took, the
// truth the shares are held to (measured_split: func_a/b/c/d do 40/30/20/10 % of the
// iterations; measured_shlib: lib_hot 50 %, main_local 30 %, lib_cold 20 % across an
// executable and its shared library), and on the fixtures' shlib_main for its stacks. Shares are read with `tally top`; the profile's total
// is read with the tests' libprotobuf reference and compared with the workload's CPU time
// from wait4 (run_measured), not with anything tally computed. Time is CPU time: the
// machine is shared, wall time means nothing here.
#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "pprof_test_helpers.h"
#include "reference_pprof.h"
#include "support/measured_split.h"
#include "support/stack_traces.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

std::string fixture_bin(const std::string& name) { return shared("fixtures/bin/" + name); }

// flat% of each function row of `tally top`.
std::map<std::string, double> flat_percent(const std::string& top) {
  std::map<std::string, double> shares;
  for (const TopRow& row : top_rows(top)) shares[row.name] = std::stod(row.flat_percent);
  return shares;
}

core::Profile read_pb(const std::string& path) {
  auto profile = reference::read_profile(gunzip_bytes(read_text(path)));
  EXPECT_TRUE(profile) << profile.error().message;
  return profile ? std::move(*profile) : core::Profile{};
}

// CPU seconds of the workload that run_measured ran (its wait4 rusage).
double measured_cpu_seconds(const std::string& file) {
  std::ifstream in(file);
  long long user_us = -1, system_us = -1;
  in >> user_us >> system_us;
  EXPECT_GE(user_us, 0) << "run_measured wrote nothing to " << file;
  return static_cast<double>(user_us + system_us) / 1e6;
}

// measured_split's shares in `profile` against those it measured (its output, in
// `workload_output`), within 2 percentage points. Its calls per function (rounds x
// threads) stay below 1% of the samples: each call's start and end can be off by a sample.
// The shares are of the four functions' time: the program's clocks around each call
// include what sampling cost there, which libtally shows as [tally: sampling].
void expect_split_shares(const std::string& profile, const std::string& workload_output) {
  const std::map<std::string, double> truth = measured_split_shares(workload_output);
  ASSERT_EQ(truth.size(), 4u);
  RunResult top = run_tally({"top", profile});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  auto shares = flat_percent(top.out);
  double work = 0;
  for (const auto& [name, percent] : truth) {
    ASSERT_TRUE(shares.count(name)) << name << " missing from\n" << top.out;
    work += shares[name];
  }
  for (const auto& [name, percent] : truth) {
    EXPECT_NEAR(100 * shares[name] / work, percent, 2.0)
        << name << " (measured " << percent << "%)\n" << top.out;
  }
}

void expect_total_matches_rusage(const std::string& profile, const std::string& usage_file,
                                 const std::string& type = "cpu-clock") {
  core::Profile p = read_pb(profile);
  int cpu = p.sample_type_index(type);
  ASSERT_GE(cpu, 0);
  EXPECT_EQ(p.str(p.sample_types[static_cast<size_t>(cpu)].unit), "nanoseconds");
  const double sampled = static_cast<double>(p.total(static_cast<size_t>(cpu))) / 1e9;
  const double real = measured_cpu_seconds(usage_file);
  EXPECT_GT(real, 0.5);
  EXPECT_NEAR(sampled, real, 0.05 * real) << "sampled " << sampled << " s, rusage " << real << " s";
}

TEST(Record, SplitSingleThreadShareAndCpuTime) {
  TempDir dir;
  const std::string out = dir.file("split.pb.gz"), usage = dir.file("usage");
  // 10 rounds of 0.15 s: 1.5 s, 1500 samples.
  RunResult r = run_tally({"record", "-F", "999", "-o", out, "--", RUN_MEASURED, usage,
                           measured_split_program(), "-r", "10", "-u", "12000000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the command used"), std::string::npos) << r.err;
  expect_split_shares(out, r.out);
  expect_total_matches_rusage(out, usage);
}

TEST(Record, SplitEightThreadsShareAndCpuTime) {
  TempDir dir;
  const std::string out = dir.file("split.pb.gz"), usage = dir.file("usage");
  // 8 threads x 2 rounds of 0.1 s: 1.6 s, 1600 samples.
  RunResult r = run_tally({"record", "-F", "999", "-g", "fp", "-o", out, "--", RUN_MEASURED,
                           usage, measured_split_program(), "-r", "2", "-u", "8000000", "-t", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_split_shares(out, r.out);
  expect_total_matches_rusage(out, usage);
  // Every thread is followed: samples carry at least 8 distinct tids besides the main one.
  core::Profile p = read_pb(out);
  std::set<int64_t> tids;
  for (size_t s = 0; s < p.sample_count(); ++s)
    for (const core::Label& l : p.labels(s))
      if (p.str(l.key) == "tid") tids.insert(l.num);
  EXPECT_GE(tids.size(), 8u);
}

// --preload: the command (and the split process it starts) profile themselves with libtally;
// their profiles are merged, and the split and CPU time are as honest as perf_event_open's.
TEST(Record, PreloadSplitShareAndCpuTime) {
  TempDir dir;
  const std::string out = dir.file("split.pb.gz"), usage = dir.file("usage");
  RunResult r = run_tally({"record", "--preload", "-F", "999", "-o", out, "--", RUN_MEASURED,
                           usage, measured_split_program(), "-r", "10", "-u", "12000000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("with libtally"), std::string::npos) << r.err;
  expect_split_shares(out, r.out);
  expect_total_matches_rusage(out, usage, "cpu");
  RunResult wrong = run_tally({"record", "--preload", "-p", "1", "-o", dir.file("x.pb.gz")});
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err;
  RunResult perf_only = run_tally({"record", "--preload", "-g", "fp", "-o", dir.file("x.pb.gz"), "--", "true"});
  EXPECT_EQ(perf_only.exit_code, 2) << perf_only.err;
  EXPECT_NE(perf_only.err.find("do not apply"), std::string::npos) << perf_only.err;
}

TEST(Record, FramePointerStacksThroughASharedLibrary) {
  TempDir dir;
  const std::string out = dir.file("shlib.pb.gz");
  RunResult r = run_tally({"record", "-g", "fp", "-o", out, "--", fixture_bin("shlib_main"), "-r", "60"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult t = run_tally({"traces", out});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  auto stacks = traces(t.out);
  // lib_hot (in libtallywork.so) is frameless, so a frame-pointer walk cannot see its
  // immediate caller lib_entry (the fixtures' documented trap); the walk continues through
  // the library's frames into the executable: run_rounds, then main.
  EXPECT_TRUE(has_stack(stacks, "lib_hot", {"run_rounds", "main"}, false)) << t.out;
  EXPECT_TRUE(has_stack(stacks, "main_local", {"main"}, false)) << t.out;
}

// The split across an executable and its shared library, within 3 percentage points of the
// CPU time measured_shlib measured in each function (1000 samples; 30 calls per function).
// Each function's cum is compared, as a share of the three: the thread's CPU clock the
// program reads includes the kernel's time on top of it (interrupts, a reschedule IPI on a
// busy machine), which a sample shows as kernel frames above the function. Its flat missed
// that: 8.8% of the samples were in the kernel in an ASan run beside a build, and lib_hot's
// flat share came out 4.4 points low.
TEST(Record, SharedLibrarySplitIsTheMeasuredOne) {
  TempDir dir;
  const std::string out = dir.file("shlib.pb.gz");
  RunResult r = run_tally({"record", "-g", "fp", "-o", out, "--", measured_shlib_program(), "-r",
                           "30", "-u", "3000000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::map<std::string, double> truth = measured_cpu_shares(r.out);
  ASSERT_EQ(truth.size(), 3u);
  RunResult top = run_tally({"top", out});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  std::map<std::string, double> cum;
  for (const TopRow& row : top_rows(top.out)) cum[row.name] = std::stod(row.cum_percent);
  double work = 0;
  for (const auto& [function, percent] : truth) {
    ASSERT_TRUE(cum.count(function)) << function << " missing from\n" << top.out;
    work += cum[function];
  }
  for (const auto& [function, percent] : truth)
    EXPECT_NEAR(100 * cum[function] / work, percent, 3)
        << function << " (measured " << percent << "%)\n" << top.out;
}

TEST(Record, DwarfStacksThroughALibraryWithoutFramePointers) {
  TempDir dir;
  const std::string out = dir.file("shlib.pb.gz");
  RunResult r = run_tally({"record", "-g", "dwarf", "-o", out, "--",
                           fixture_bin("shlib_main-nofp"), "-r", "60"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult t = run_tally({"traces", out});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  auto stacks = traces(t.out);
  // The CFI unwinder finds every caller, the frameless leaf's included; lib_cold is reached
  // by a tail call from lib_entry, so its caller is run_rounds.
  EXPECT_TRUE(has_stack(stacks, "lib_hot", {"lib_entry", "run_rounds", "main"}, true)) << t.out;
  EXPECT_TRUE(has_stack(stacks, "lib_cold", {"run_rounds", "main"}, true)) << t.out;
  EXPECT_TRUE(has_stack(stacks, "main_local", {"run_rounds", "main"}, true)) << t.out;
}

// Waits until process `pid` has at least `threads` threads (the workload is running), at
// most 20 s.
void wait_threads(pid_t pid, size_t threads) {
  for (int i = 0; i < 200; ++i) {
    size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
      ++n;
    if (n >= threads) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "process " << pid << " never had " << threads << " threads";
}

void expect_valid_split_profile(const std::string& out) {
  RunResult top = run_tally({"top", out});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_GT(flat_percent(top.out)["func_a"], 20) << top.out;
}

TEST(Record, SigintIsForwardedToTheCommandAndTheProfileIsWritten) {
  TempDir dir;
  const std::string out = dir.file("int.pb.gz");
  // A million rounds would take hours: SIGINT to tally alone 1.5 s after it set its handler
  // (and started the command), not after its start: a slow start on a loaded machine would
  // otherwise be killed by the SIGINT meant for the command.
  RunResult r = run_tally({"record", "-g", "fp", "-o", out, "--", fixture_bin("split"), "-r",
                           "1000000"},
                          RunOptions{.signal_after_seconds = 1.5, .signal = SIGINT,
                                     .signal_once_caught = true});
  // The command died of the forwarded SIGINT: 128 + 2, as a shell reports it.
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_NE(r.err.find("tally: wrote"), std::string::npos) << r.err;
  expect_valid_split_profile(out);
}

TEST(Record, SigintStopsRecordingAProcess) {
  TempDir dir;
  const std::string out = dir.file("p.pb.gz");
  BackgroundProcess workload({fixture_bin("split"), "-r", "1000000", "-t", "2"}, dir.file("wlog"));
  wait_threads(workload.pid(), 3);
  // 1.5 s of recording from the moment tally handles SIGINT (it has attached by then).
  RunResult r = run_tally({"record", "-g", "fp", "-p", std::to_string(workload.pid()), "-o", out},
                          RunOptions{.signal_after_seconds = 1.5, .signal = SIGINT,
                                     .signal_once_caught = true});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  // The workload is left running: -p only watches.
  EXPECT_TRUE(workload.running());
  workload.stop(SIGKILL);
  expect_valid_split_profile(out);
  core::Profile p = read_pb(out);
  std::set<int64_t> tids;
  for (size_t s = 0; s < p.sample_count(); ++s)
    for (const core::Label& l : p.labels(s))
      if (p.str(l.key) == "tid") tids.insert(l.num);
  EXPECT_GE(tids.size(), 2u) << "both worker threads are sampled";
}

TEST(Record, ThreadsCreatedAfterAttachingAreFollowed) {
  TempDir dir;
  const std::string out = dir.file("late.pb.gz"), log = dir.file("log"), go = dir.file("go"),
                    workload_output = dir.file("split.out");
  // A shell that starts the threaded workload only after tally has attached to the shell
  // (it waits, blocked, for a line on a FIFO): split and its threads are new
  // processes/threads, followed by inheritance.
  ASSERT_EQ(mkfifo(go.c_str(), 0600), 0);
  BackgroundProcess shell(
      {"/bin/sh", "-c",
       "read line < " + go + "; exec " + measured_split_program() + " -r 3 -u 12000000 -t 3 >" +
           workload_output});
  BackgroundProcess tally({tally_binary(), "record", "-g", "fp", "-p", std::to_string(shell.pid()), "-o", out},
                          log);
  // tally sets its SIGINT handler once it has attached to the shell: only then may the
  // workload start (a fixed wait let a slow tally miss the start of the work, or the shell).
  ASSERT_TRUE(wait_until_catches(tally.pid(), SIGINT)) << read_text(log);
  std::ofstream(go) << "go\n";
  // -p ends by itself once the process is gone.
  EXPECT_EQ(tally.wait(), 0) << read_text(log);
  shell.wait();
  expect_split_shares(out, read_text(workload_output));
}

TEST(Record, ExitStatusIsTheCommands) {
  TempDir dir;
  // A period of 1000 s: the shell's few milliseconds give no sample.
  RunResult r = run_tally({"record", "-c", "1000000000000", "-o", dir.file("x.pb.gz"), "--",
                           "/bin/sh", "-c", "exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("no samples"), std::string::npos) << r.err;
  // The (empty) profile is still written and reads.
  EXPECT_EQ(run_tally({"cat", "--summary", dir.file("x.pb.gz")}).exit_code, 0);
}

TEST(Record, CommandLineErrors) {
  TempDir dir;
  const std::string out = dir.file("x.pb.gz");
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"record", "-o", out}, 2, "exactly one target"},
      {{"record", "-a", "-p", "1", "-o", out}, 2, "exactly one target"},
      {{"record", "-g", "lbr", "-o", out, "--", "true"}, 2, "-g must be"},
      {{"record", "-g", "dwarf,100000", "-o", out, "--", "true"}, 2, "SIZE must be"},
      {{"record", "-F", "99", "-c", "1000", "-o", out, "--", "true"}, 2, "excludes"},
      {{"record", "-e", "no-such-event", "-o", out, "--", "true"}, 2, "unknown event"},
      {{"record", "-p", "12x", "-o", out}, 2, "-p takes"},
      {{"record", "--format", "svg", "-o", out, "--", "true"}, 2, "unknown output format"},
      {{"record", "-o", out, "--", "/no/such/program"}, 3, "cannot run '/no/such/program'"},
      {{"record", "-p", "999999999", "-o", out}, 3, "process 999999999 does not exist"},
  };
  for (const Case& c : cases) {
    RunResult r = run_tally(c.args);
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::ifstream(out).good()) << "no profile after an error";
}

TEST(Record, SeveralEventsOneSampleTypeEach) {
  TempDir dir;
  const std::string out = dir.file("two.pb.gz");
  RunResult f = run_tally({"record", "-e", "cpu-clock", "-e", "page-faults", "-g", "none", "-o",
                           out, "--", fixture_bin("split"), "-r", "40"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  core::Profile p = read_pb(out);
  int cpu = p.sample_type_index("cpu-clock"), faults = p.sample_type_index("page-faults");
  ASSERT_GE(cpu, 0);
  ASSERT_GE(faults, 0);
  EXPECT_EQ(p.str(p.sample_types[static_cast<size_t>(faults)].unit), "count");
  EXPECT_GT(p.total(static_cast<size_t>(cpu)), 200'000'000);
  EXPECT_GT(p.total(static_cast<size_t>(faults)), 0);
  // A sample belongs to one event: never both values at once.
  for (size_t s = 0; s < p.sample_count(); ++s)
    EXPECT_FALSE(p.values(s)[static_cast<size_t>(cpu)] && p.values(s)[static_cast<size_t>(faults)]);
}

TEST(Record, OtherOutputFormats) {
  TempDir dir;
  const std::string folded = dir.file("split.folded");
  RunResult r = run_tally({"record", "-g", "fp", "--format", "folded", "-o", folded, "--",
                           fixture_bin("split"), "-r", "30"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(folded);
  EXPECT_NE(text.find("main;"), std::string::npos) << text;
  EXPECT_NE(text.find(";func_a "), std::string::npos) << text;
  const std::string gperf = dir.file("split.prof");
  r = run_tally({"record", "-g", "fp", "--format", "gperf", "-o", gperf, "--",
                 fixture_bin("split"), "-r", "30"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult top = run_tally({"top", "--binary-path", shared("fixtures/bin"), gperf});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_GT(flat_percent(top.out)["func_a"], 25) << top.out;
}

TEST(Record, SystemWide) {
  TempDir dir;
  const std::string out = dir.file("all.pb.gz");
  BackgroundProcess workload({fixture_bin("split"), "-r", "1000000"}, dir.file("wlog"));
  wait_threads(workload.pid(), 1);
  RunResult r = run_tally({"record", "-a", "-g", "fp", "--duration", "1", "-o", out});
  workload.stop(SIGKILL);
  if (r.exit_code != 0 && r.err.find("not permitted") != std::string::npos)
    TALLY_SKIP_OR_FAIL_IN_CI("system-wide sampling is not permitted here: " << r.err);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult top = run_tally({"top", "--focus", "func_", out});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("func_a"), std::string::npos) << top.out;
}

}  // namespace
}  // namespace tally::test
