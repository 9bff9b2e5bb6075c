// sprofil's per-thread timers (src/runtime/sprofil_timers.cc), compiled into this test: a
// thread that arms its own timer while another thread lists /proc/self/task and arms the
// threads it finds must end with one timer, not two. Two timers on one thread's CPU clock
// count its ticks twice (CI saw 96 ticks for 200 ms of CPU at 4 ms a tick). The timers are
// armed with an interval of an hour of CPU time: they never fire here; what is checked is
// the kernel's own list of the process's timers (/proc/self/timers).
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "runtime/sprofil_timers.h"
#include "support/test_support.h"

namespace tally::runtime {
namespace {

constexpr uint64_t kHourNs = 3600ull * 1'000'000'000ull;

int current_tid() { return static_cast<int>(syscall(SYS_gettid)); }

// Timers that signal one thread, counted per thread id, from the kernel's list
// ("notify: signal/tid.1234" for SIGEV_THREAD_ID; "signal/pid.N" for the process).
std::map<int, int> thread_timers() {
  std::map<int, int> count;
  std::ifstream in("/proc/self/timers");
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find("/tid.");
    if (line.rfind("notify:", 0) == 0 && at != std::string::npos)
      ++count[std::stoi(line.substr(at + 5))];
  }
  return count;
}

bool have_timer_list() {
  std::ifstream in("/proc/self/timers");
  return in.good();
}

// Every round: threads released at once each arm their own timer (adopt_current_thread,
// as a new thread does at its start); the first of them, and the main thread starting
// the timers, also list the process's threads and arm those without one, racing with
// the threads' own arming.
TEST(SprofilTimers, ThreadArmingItselfWhileAnotherListsItGetsOneTimer) {
  if (!have_timer_list())
    TALLY_SKIP_OR_FAIL_IN_CI("no /proc/self/timers (a kernel without CONFIG_CHECKPOINT_RESTORE)");
  constexpr int kRounds = 200;
  constexpr int kThreads = 8;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<bool> go{false}, done{false};
    std::atomic<int> armed{0};
    std::vector<int> tids(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        tids[i] = current_tid();
        while (!go.load()) {
        }
        adopt_current_thread(kHourNs);
        armed.fetch_add(1);
        while (!done.load()) std::this_thread::yield();
      });
    }
    go.store(true);
    ASSERT_EQ(start_tick_timers(kHourNs), 0);
    while (armed.load() != kThreads) std::this_thread::yield();
    const std::map<int, int> timers = thread_timers();
    done.store(true);
    for (std::thread& t : threads) t.join();
    stop_tick_timers();
    for (int tid : tids) {
      const auto it = timers.find(tid);
      ASSERT_NE(it, timers.end()) << "round " << round << ": thread " << tid << " has no timer";
      ASSERT_EQ(it->second, 1) << "round " << round << ": thread " << tid << " has "
                               << it->second << " timers: its ticks count that many times";
    }
  }
  EXPECT_TRUE(thread_timers().empty()) << "timers left after stop_tick_timers";
}

}  // namespace
}  // namespace tally::runtime
