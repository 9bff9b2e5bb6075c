// perf itself, run while tally samples the whole machine, must work. While any event with
// attr.build_id was open, the kernel (up to at least 6.18) flagged the MMAP2 records of
// perf's own events as holding a build id over a body of device and inode; perf 6.1 read
// the device major as the build id's size and died ("stack smashing detected", exit 134),
// and so did perf script on the file. tally opens its events without attr.build_id, and
// reads the records flagged so by another tool's build-id events as device and inode.
// Needs root (tally record -a) and a perf that records; skips without them on a developer's
// machine, fails under CI (TALLY_REQUIRE_PEERS=1). Samples the whole machine: runs alone.
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <regex>
#include <thread>
#include <vector>

#include "support/perf_run_verdict.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

// How many ring buffers process `pid` has mapped ("anon_inode:[perf_event]" in its maps).
int mapped_rings(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  int rings = 0;
  while (std::getline(maps, line))
    if (line.find("[perf_event]") != std::string::npos) ++rings;
  return rings;
}

TEST(PerfBesideTally, PerfRecordAndScriptWorkWhileTallyRecordsEveryCpu) {
  const std::string perf = find_program("perf");
  TALLY_REQUIRE_PEER(perf, "perf");
  if (::geteuid() != 0) TALLY_SKIP_OR_FAIL_IN_CI("tally record -a needs root");
  TempDir dir;
  {
    // A crash fails; a refusal (or another failure) alone says perf does not work here.
    const PerfRunVerdict alone =
        judge_perf_run(run({perf, "record", "-o", dir.file("alone.data"), "--", "/bin/true"}));
    if (alone.kind == PerfRunKind::crashed) FAIL() << alone.why;
    if (alone.kind != PerfRunKind::ran)
      TALLY_SKIP_OR_FAIL_IN_CI("perf record does not work here even alone: " << alone.why);
  }

  const std::string profile = dir.file("all.pb.gz");
  BackgroundProcess tally({tally_binary(), "record", "-a", "--duration", "120", "-o", profile},
                          dir.file("tally.log"));
  // Sampling once a ring per CPU is mapped: from then on its events are open.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (mapped_rings(tally.pid()) < cpus && tally.running() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(mapped_rings(tally.pid()), cpus) << "tally record -a never mapped its rings: "
                                             << read_text(dir.file("tally.log"));

  const std::string data = dir.file("perf.data");
  RunResult record = run({perf, "record", "-o", data, "--", "/bin/true"});
  EXPECT_EQ(record.exit_code, 0) << record.describe();
  RunResult script = run({perf, "script", "--show-mmap-events", "-i", data});
  EXPECT_EQ(script.exit_code, 0) << script.describe();
  EXPECT_NE(script.out.find("PERF_RECORD_MMAP2"), std::string::npos) << script.out;

  // tally's profile still names the binaries' build ids (read from the files now).
  EXPECT_EQ(tally.stop(SIGINT), 0) << read_text(dir.file("tally.log"));
  RunResult cat = run_tally({"cat", profile});
  ASSERT_EQ(cat.exit_code, 0) << cat.describe();
  EXPECT_TRUE(std::regex_search(cat.out, std::regex("\n(mapping [0-9]+: )[^\n]* /[^\n]* "
                                                   "build_id=[0-9a-f]{40}")))
      << cat.out;
}

// What another tool that asks for build ids (perf record --buildid-mmap, an older tally)
// holds: a dummy event per CPU with attr.build_id and a mapped ring, for the whole machine.
class BuildIdEventsOnEveryCpu {
 public:
  BuildIdEventsOnEveryCpu() {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const size_t bytes = 9 * static_cast<size_t>(sysconf(_SC_PAGESIZE));
    for (int cpu = 0; cpu < cpus; ++cpu) {
      perf_event_attr attr{};
      attr.size = sizeof attr;
      attr.type = PERF_TYPE_SOFTWARE;
      attr.config = PERF_COUNT_SW_DUMMY;
      attr.mmap = 1;
      attr.mmap2 = 1;
      attr.build_id = 1;
      int fd = static_cast<int>(::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0));
      if (fd < 0) return;
      fds_.push_back(fd);
      void* ring = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (ring == MAP_FAILED) return;
      rings_.push_back(ring);
    }
    ok_ = true;
  }
  ~BuildIdEventsOnEveryCpu() {
    const size_t bytes = 9 * static_cast<size_t>(sysconf(_SC_PAGESIZE));
    for (void* ring : rings_) ::munmap(ring, bytes);
    for (int fd : fds_) ::close(fd);
  }
  bool ok() const { return ok_; }

 private:
  std::vector<int> fds_;
  std::vector<void*> rings_;
  bool ok_ = false;
};

// The kernel flags tally's MMAP2 records too, over device and inode: tally reads them as
// such (they used to be skipped as bad records, "build id size 254"), so the command's
// mappings are all there, with the build ids read from the files.
TEST(PerfBesideTally, TallyRecordReadsTheRecordsAnotherBuildIdUserFlags) {
  if (::geteuid() != 0) TALLY_SKIP_OR_FAIL_IN_CI("system-wide events need root");
  BuildIdEventsOnEveryCpu other;
  ASSERT_TRUE(other.ok()) << std::strerror(errno);
  TempDir dir;
  const std::string profile = dir.file("split.pb.gz");
  const std::string split = shared("fixtures/bin/split");
  RunResult record = run_tally({"record", "-g", "fp", "-o", profile, "--", split, "-r", "5"});
  ASSERT_EQ(record.exit_code, 0) << record.describe();
  EXPECT_EQ(record.err.find("could not be decoded"), std::string::npos) << record.err;
  RunResult cat = run_tally({"cat", profile});
  ASSERT_EQ(cat.exit_code, 0) << cat.describe();
  EXPECT_TRUE(std::regex_search(cat.out, std::regex("/split build_id=[0-9a-f]{40}"))) << cat.out;
}

}  // namespace
}  // namespace tally::test
