// PushInterval's service of a process that is gone by the time its records are read: a
// forked child is its parent's service until it runs exec; after exec the kernel's COMM
// name stands in for the executable's (a systemd unit's service stays: exec keeps the
// cgroup); only a process never seen alive is "unknown".
#include "daemon/push_interval.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>

#include "daemon/service_name.h"
#include "store/image_id.h"

namespace tally::daemon {
namespace {

// A pid no process has: a child that has exited and been waited for.
pid_t gone_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// Each service's sample count in the interval.
std::map<std::string, uint64_t> samples_by_service(PushInterval& interval) {
  store::Aggregate aggregate({{"cpu-clock", "nanoseconds"}}, true);
  store::ImageKey key{.path = "/bin/true"};
  (void)aggregate.image({store::image_id(key), key}, 0, 4096);  // image 0 of kStack
  std::map<std::string, uint64_t> out;
  for (const auto& profile : interval.take(aggregate, 0, 1)) out[profile.service] += profile.samples;
  return out;
}

const std::vector<store::Frame> kStack{{0, 0x10}};

TEST(PushInterval, AForkedChildGoneBeforeItsSamplesAreReadIsItsParentsService) {
  PushInterval interval("");
  const pid_t parent = ::getpid(), child = gone_pid();
  interval.note_process(parent);
  interval.note_fork(parent, child);
  interval.add(child, 0, kStack, 1);
  interval.add(child, 0, kStack, 1);
  const auto services = samples_by_service(interval);
  EXPECT_EQ(services, (std::map<std::string, uint64_t>{{service_of_process(parent), 2}}));
}

TEST(PushInterval, AProcessGoneAfterExecIsNamedByItsCommNotUnknown) {
  PushInterval interval("");
  const pid_t parent = ::getpid(), child = gone_pid();
  interval.note_fork(parent, child);  // the parent not seen: nothing inherited
  interval.note_exec(child, "cc1plus");
  interval.add(child, 0, kStack, 1);
  const pid_t never_seen = gone_pid();
  interval.add(never_seen, 0, kStack, 1);
  const auto services = samples_by_service(interval);
  EXPECT_EQ(services, (std::map<std::string, uint64_t>{{"cc1plus", 1}, {"unknown", 1}}));
}

TEST(PushInterval, AKnownChildGoneAfterExecIsItsCommUnlessItsServiceIsASystemdUnit) {
  PushInterval interval("");
  const pid_t parent = ::getpid(), child = gone_pid();
  bool from_cgroup = false;
  const std::string parent_service = service_of_process(parent, &from_cgroup);
  interval.note_process(parent);
  interval.note_fork(parent, child);
  interval.note_exec(child, "cc1plus");  // exec keeps the cgroup, not the executable
  interval.add(child, 0, kStack, 1);
  EXPECT_EQ(samples_by_service(interval),
            (std::map<std::string, uint64_t>{{from_cgroup ? parent_service : "cc1plus", 1}}));
}

TEST(PushInterval, AFixedServiceNamesEveryProcess) {
  PushInterval interval("api");
  const pid_t child = gone_pid();
  interval.note_fork(::getpid(), child);
  interval.note_exec(child, "cc1plus");
  interval.add(child, 0, kStack, 1);
  EXPECT_EQ(samples_by_service(interval), (std::map<std::string, uint64_t>{{"api", 1}}));
}

}  // namespace
}  // namespace tally::daemon
