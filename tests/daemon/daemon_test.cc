// tally daemon end to end (as root, as CI runs): workloads run while the daemon samples
// the whole machine; `tally top --db` must show their splits within 3 percentage points of
// the CPU time they measured in each function (measured_split's func_a..d, about
// 40/30/20/10, and measured_shlib's 50/30/20 across an executable and its shared library);
// `tally epoch` and different work give two epochs whose diff shows the change. Also: who may control the daemon, the error without privileges, one daemon
// per database, a flush on SIGINT.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "daemon_process.h"
#include "support/measured_split.h"
#include "support/privileges.h"
#include "support/stack_traces.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

using ::testing::HasSubstr;

#define REQUIRE_SYSTEM_WIDE()                                                            \
  do {                                                                                   \
    if (!can_sample_system_wide())                                                       \
      TALLY_SKIP_OR_FAIL_IN_CI("system-wide sampling is not permitted here (needs root " \
                               "or CAP_PERFMON)");                                       \
  } while (0)

std::string bin(const std::string& name) { return shared("fixtures/bin/" + name); }

// A regex that matches `path` and nothing else: the daemon sees every process on the
// machine, and others may run a program of the same name from another tree.
std::string only(const std::string& path) {
  std::string regex = "^";
  for (char c : path) {
    if (std::strchr("\\^$.|?*+()[]{}", c)) regex += '\\';
    regex += c;
  }
  return regex + "$";
}

// libmeasuredshlib.so, beside measured_shlib.
std::string measured_shlib_library() {
  return std::filesystem::path(measured_shlib_program()).parent_path() / "libmeasuredshlib.so";
}

void expect_near_split(const std::map<std::string, double>& got,
                       const std::map<std::string, double>& want, const std::string& output) {
  for (const auto& [name, percent] : want) {
    ASSERT_TRUE(got.count(name)) << name << " missing from\n" << output;
    EXPECT_NEAR(got.at(name), percent, 3.0) << name << " in\n" << output;
  }
}

// The diff row of `name`: its Δflat in percentage points and whether it is significant.
std::pair<double, bool> diff_row(const std::string& diff, const std::string& name) {
  std::istringstream lines(diff);
  for (std::string line; std::getline(lines, line);) {
    if (!line.ends_with(" " + name)) continue;
    std::istringstream fields(line);
    std::string base, next, delta;
    fields >> base >> next >> delta;
    return {std::stod(delta.substr(0, delta.size() - 2)), line.find(" * ") != std::string::npos};
  }
  return {0, false};
}

TEST(Daemon, ShowsTheWorkloadsSplitsAndTheChangeBetweenEpochs) {
  REQUIRE_SYSTEM_WIDE();
  TempDir dir;
  const std::string db = dir.file("db");
  // A high rate, so that a second of each workload gives thousands of samples.
  DaemonProcess daemon(db, {"-F", "4999", "--flush", "3600"});
  ASSERT_TRUE(daemon.started()) << daemon.log();

  // 7 rounds of 0.15 s: about 1 s each.
  RunResult workload = run({measured_split_program(), "-r", "7", "-u", "15000000"});
  ASSERT_EQ(workload.exit_code, 0) << workload.describe();
  RunResult shlib_workload = run({measured_shlib_program(), "-r", "7", "-u", "15000000"});
  ASSERT_EQ(shlib_workload.exit_code, 0) << shlib_workload.describe();
  auto flushed = run_tally({"flush", "--db", db});
  ASSERT_EQ(flushed.exit_code, 0) << flushed.err;
  EXPECT_THAT(flushed.out, HasSubstr("flushed"));

  auto split = run_tally({"top", "--db", db, "--image", only(measured_split_program())});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_THAT(split.out, HasSubstr("/measured_split\n"));
  const auto truth = measured_split_shares(workload.out);
  ASSERT_EQ(truth.size(), 4u);
  expect_near_split(flat_percent(split.out, {"func_a", "func_b", "func_c", "func_d"}), truth,
                    split.out);

  // Functions across two images: the executable and its shared library.
  auto shlib = run_tally({"top", "--db", db, "--image",
                          only(measured_shlib_program()) + "|" + only(measured_shlib_library())});
  ASSERT_EQ(shlib.exit_code, 0) << shlib.err;
  EXPECT_THAT(shlib.out, HasSubstr("/libmeasuredshlib.so\n"));
  const auto shlib_truth = measured_cpu_shares(shlib_workload.out);
  ASSERT_EQ(shlib_truth.size(), 3u);
  expect_near_split(flat_percent(shlib.out, {"lib_hot", "main_local", "lib_cold"}), shlib_truth,
                    shlib.out);

  // A new epoch, and other work in it: only the shared-library workload.
  auto epoch = run_tally({"epoch", "--db", db});
  ASSERT_EQ(epoch.exit_code, 0) << epoch.err;
  EXPECT_THAT(epoch.out, HasSubstr("new epoch"));
  ASSERT_EQ(run({measured_shlib_program(), "-r", "7", "-u", "15000000"}).exit_code, 0);
  EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();  // flushes before it exits

  std::vector<std::string> epochs;
  for (const auto& e : std::filesystem::directory_iterator(db))
    if (e.is_directory()) epochs.push_back(e.path().filename().string());
  std::sort(epochs.begin(), epochs.end());
  ASSERT_EQ(epochs.size(), 2u);
  auto diff = run_tally({"diff", "--db", db, epochs[0], epochs[1], "--image",
                         only(measured_split_program()) + "|" + only(measured_shlib_program()) +
                             "|" + only(measured_shlib_library())});
  ASSERT_EQ(diff.exit_code, 0) << diff.err << daemon.log();
  // Base: measured_split and measured_shlib, about a second each; new: measured_shlib alone.
  // func_a's share drops from about 20% to none, lib_hot's rises from about 25% to 50%.
  const auto [func_a, func_a_significant] = diff_row(diff.out, "func_a");
  EXPECT_LT(func_a, -5) << diff.out << daemon.log();
  EXPECT_TRUE(func_a_significant) << diff.out;
  const auto [lib_hot, lib_hot_significant] = diff_row(diff.out, "lib_hot");
  EXPECT_GT(lib_hot, 5) << diff.out;
  EXPECT_TRUE(lib_hot_significant) << diff.out << daemon.log();
  EXPECT_THAT(daemon.log(), HasSubstr("(exit)"));
}

TEST(Daemon, FlushesOnSigint) {
  REQUIRE_SYSTEM_WIDE();
  TempDir dir;
  const std::string db = dir.file("db");
  DaemonProcess daemon(db, {"-F", "999"});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  ASSERT_EQ(run({bin("split"), "-r", "30"}).exit_code, 0);
  EXPECT_EQ(daemon.stop(SIGINT), 0) << daemon.log();
  auto top = run_tally({"top", "--db", db, "--image", "/split$"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("func_a"));
}

// --call-graph dwarf: the daemon unwinds the copied user stacks with CFI, so the callers
// of the frameless functions in a library built without frame pointers are all there,
// the leaf's immediate caller included (a frame-pointer walk skips lib_entry).
TEST(Daemon, DwarfCallGraphFindsEveryCallerThroughALibraryWithoutFramePointers) {
  REQUIRE_SYSTEM_WIDE();
  TempDir dir;
  const std::string db = dir.file("db");
  DaemonProcess daemon(db, {"-F", "999", "--call-graph", "dwarf"});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  ASSERT_EQ(run({bin("shlib_main-nofp"), "-r", "60"}).exit_code, 0);
  EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();
  EXPECT_THAT(daemon.log(), HasSubstr("call stacks dwarf"));

  auto library = run_tally({"traces", "--db", db, "--image", "/libtallywork-nofp\\.so$"});
  ASSERT_EQ(library.exit_code, 0) << library.err;
  auto stacks = traces(library.out);
  EXPECT_TRUE(has_stack(stacks, "lib_hot", {"lib_entry", "run_rounds", "main"}, true))
      << library.out << daemon.log();
  EXPECT_TRUE(has_stack(stacks, "lib_cold", {"run_rounds", "main"}, true)) << library.out;
  auto executable = run_tally({"traces", "--db", db, "--image", "/shlib_main-nofp$"});
  ASSERT_EQ(executable.exit_code, 0) << executable.err;
  EXPECT_TRUE(has_stack(traces(executable.out), "main_local", {"run_rounds", "main"}, true))
      << executable.out;
}

// Everything `fd` gives until its end.
std::string read_all(int fd) {
  std::string text;
  char buf[512];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  return text;
}

// Connects to the control socket as user `uid` in a child process; returns what the
// daemon answered, or "connect: <error>".
std::string ask_as(uid_t uid, const std::string& socket_path) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "pipe";
  pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    std::string answer;
    if (setuid(uid) != 0) answer = "setuid failed";
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
    if (answer.empty() && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      answer = std::string("connect: ") + std::strerror(errno);
    } else if (answer.empty()) {
      (void)!write(fd, "flush\n", 6);
      answer = read_all(fd);
    }
    (void)!write(pipe_fds[1], answer.data(), answer.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  const std::string answer = read_all(pipe_fds[0]);
  close(pipe_fds[0]);
  waitpid(child, nullptr, 0);
  return answer;
}

TEST(Daemon, OnlyItsOwnerAndRootMayControlIt) {
  REQUIRE_SYSTEM_WIDE();
  if (geteuid() != 0) TALLY_SKIP_OR_FAIL_IN_CI("needs root to act as another user");
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);  // others may reach the socket file
  const std::string db = dir.file("db");
  DaemonProcess daemon(db, {});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  const std::string socket_path = db + "/control.sock";
  struct stat st {};
  ASSERT_EQ(stat(socket_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THAT(ask_as(0, socket_path), HasSubstr("ok flushed"));
  // Another user cannot even connect to the 0600 socket...
  EXPECT_THAT(ask_as(65534, socket_path), HasSubstr("connect: Permission denied"));
  // ...and were the file opened up, the daemon's own check (SO_PEERCRED) refuses it.
  ASSERT_EQ(chmod(socket_path.c_str(), 0666), 0);
  EXPECT_THAT(ask_as(65534, socket_path), HasSubstr("error permission denied"));
  // The daemon replies first and logs the refusal after: a loaded machine showed the log
  // read between the two, so wait for the line (at most 30 s).
  const std::string refusal = "refused a control request of uid 65534";
  for (int i = 0; i < 300 && daemon.log().find(refusal) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_THAT(daemon.log(), HasSubstr(refusal));
}

// As nobody, without capabilities: where perf_event_paranoid lets anyone sample every CPU
// (<= 0), root raises it to 1 for the test (the daemon tests run alone).
TEST(Daemon, WithoutPrivilegesSaysWhatItNeeds) {
  if (geteuid() != 0) TALLY_SKIP_OR_FAIL_IN_CI("needs root to run the daemon as another user");
  ParanoidAtLeast strict(1);
  if (!strict.problem().empty()) TALLY_SKIP_OR_FAIL_IN_CI(strict.problem());
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  const std::string db = dir.file("db");
  int err_pipe[2];
  ASSERT_EQ(pipe(err_pipe), 0);
  pid_t child = fork();
  if (child == 0) {
    dup2(err_pipe[1], 2);
    if (const std::string problem = drop_to_nobody(); !problem.empty()) {
      (void)!write(2, problem.data(), problem.size());
      _exit(99);
    }
    execl(tally_binary().c_str(), "tally", "daemon", "--db", db.c_str(), nullptr);
    _exit(98);
  }
  close(err_pipe[1]);
  const std::string err = read_all(err_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  EXPECT_LT(WEXITSTATUS(status), 90) << err;
  EXPECT_THAT(err, HasSubstr("needs root or CAP_PERFMON")) << err;
  EXPECT_THAT(err, HasSubstr("perf_event_paranoid")) << err;
}

TEST(Daemon, OnePerDatabase) {
  REQUIRE_SYSTEM_WIDE();
  TempDir dir;
  const std::string db = dir.file("db");
  DaemonProcess first(db, {});
  ASSERT_TRUE(first.started()) << first.log();
  auto second = run_tally({"daemon", "--db", db});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_THAT(second.err, HasSubstr("another tally daemon is already writing this database"));
  // The first one still answers.
  EXPECT_EQ(run_tally({"flush", "--db", db}).exit_code, 0);
}

TEST(Daemon, FlushAndEpochWithoutADaemonSaySo) {
  TempDir dir;
  for (const char* command : {"flush", "epoch"}) {
    auto r = run_tally({command, "--db", dir.path()});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_THAT(r.err, HasSubstr("no tally daemon is running on " + dir.path()));
  }
}

}  // namespace
}  // namespace tally::test
