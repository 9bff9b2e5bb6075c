// The Sampler and ChildCommand against the running kernel, with a consumer that checks
// the API's promises: records come in time order across the CPUs' rings; every sample of
// the command comes after the MMAP2 of the code it is in; each sample names its event
// (two events at once); every thread is followed; the command's exit, rusage and signals.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "collect/child_command.h"
#include "collect/cpu_topology.h"
#include "collect/sampler.h"
#include "support/test_support.h"

namespace tally::collect {
namespace {

sigset_t current_mask() {
  sigset_t mask;
  sigprocmask(SIG_SETMASK, nullptr, &mask);
  return mask;
}

struct Range {
  uint64_t start, limit;
};

class CheckingConsumer : public SampleConsumer {
 public:
  void on_sample(const SampleRecord& s) override {
    see(s.origin.time);
    ++samples_by_event[s.event];
    tids.insert(s.origin.tid);
    if (s.in_kernel()) return;
    ++user_samples;
    bool mapped = false;
    for (const Range& r : maps[s.origin.pid]) mapped |= r.start <= s.ip && s.ip < r.limit;
    if (mapped) ++user_samples_mapped;
  }
  void on_mmap(const MmapRecord& m) override {
    see(m.origin.time);
    if (m.executable()) maps[m.pid].push_back({m.start, m.start + m.length});
    if (m.filename.find("split") != std::string_view::npos && !m.build_id.empty())
      exe_build_id = m.build_id;
  }
  void on_comm(const CommRecord& c) override {
    see(c.origin.time);
    if (c.exec) exec_comm = std::string(c.comm);
  }
  void on_fork(const TaskRecord& t) override {
    see(t.origin.time);
    ++forks;
  }
  void on_exit(const TaskRecord& t) override { see(t.origin.time); }

  std::map<size_t, uint64_t> samples_by_event;
  std::map<uint32_t, std::vector<Range>> maps;
  std::set<uint32_t> tids;
  uint64_t user_samples = 0, user_samples_mapped = 0, out_of_order = 0, forks = 0;
  uint64_t last_time = 0;
  std::string exec_comm, exe_build_id;

 private:
  void see(uint64_t time) {
    if (time != 0 && time < last_time) ++out_of_order;
    if (time != 0) last_time = time;
  }
};

TEST(Sampler, CommandWithTwoEventsInTimeOrder) {
  auto child = ChildCommand::spawn({test::shared("fixtures/bin/split"), "-r", "40", "-t", "4"},
                                   current_mask());
  ASSERT_TRUE(child) << child.error().message;
  SamplerConfig config;
  config.events = {*parse_event("cpu-clock:u"), *parse_event("task-clock:u")};
  config.sampling.call_graph = CallGraphMode::fp;
  config.target = TargetKind::command;
  config.pids = {child->pid()};
  auto sampler = Sampler::open(config);
  ASSERT_TRUE(sampler) << sampler.error().message;
  EXPECT_EQ((*sampler)->stats().rings, online_cpus().size());
  ASSERT_TRUE(child->start());
  CheckingConsumer consumer;
  while (!child->poll_exit()) ASSERT_TRUE((*sampler)->read(consumer, 100));
  (*sampler)->disable();
  ASSERT_TRUE((*sampler)->drain(consumer));

  EXPECT_EQ(child->exit_code(), 0);
  const rusage& usage = child->usage();
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec) +
                     static_cast<double>(usage.ru_utime.tv_usec) / 1e6;
  EXPECT_GT(cpu, 0.2);

  const SamplerStats& stats = (*sampler)->stats();
  EXPECT_EQ(stats.bad_records, 0u);
  EXPECT_EQ(consumer.out_of_order, 0u) << "records must come in time order across rings";
  EXPECT_GT(consumer.samples_by_event[0], 100u);
  EXPECT_GT(consumer.samples_by_event[1], 100u);
  EXPECT_EQ(consumer.samples_by_event[0] + consumer.samples_by_event[1], stats.samples);
  EXPECT_GE(consumer.tids.size(), 4u) << "the 4 workers (the main thread only waits)";
  EXPECT_GE(consumer.forks, 4u);
  EXPECT_EQ(consumer.exec_comm, "split");
  EXPECT_EQ(consumer.exe_build_id.size(), 40u) << "the build id, read from the mapped file";
  // Every user sample lies in code whose MMAP2 was delivered before it.
  EXPECT_EQ(consumer.user_samples_mapped, consumer.user_samples);
}

// What tally record adds to ChildCommand (its start, exit and exec errors are tally
// stat's tests): the rusage of the command, and signals forwarded to it.
TEST(ChildCommand, UsageAndForwardedSignals) {
  auto child = ChildCommand::spawn({test::shared("fixtures/bin/split"), "-r", "20"}, current_mask());
  ASSERT_TRUE(child);
  ASSERT_TRUE(child->start());
  child->wait_exit();
  EXPECT_EQ(child->exit_code(), 0);
  EXPECT_GT(child->usage().ru_utime.tv_sec * 1000000 + child->usage().ru_utime.tv_usec, 100000)
      << "split -r 20 burns about 0.2 s of CPU";

  auto sleeper = ChildCommand::spawn({"/bin/sleep", "30"}, current_mask());
  ASSERT_TRUE(sleeper);
  ASSERT_TRUE(sleeper->start());
  sleeper->signal(SIGTERM);
  sleeper->wait_exit();
  EXPECT_EQ(sleeper->exit_code(), 128 + SIGTERM);
}

}  // namespace
}  // namespace tally::collect
