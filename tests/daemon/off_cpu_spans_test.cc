// tally daemon --off-cpu's pairing of switch-out samples with SWITCH records
// (src/daemon/off_cpu_spans.h): the nanoseconds from switch-out to switch-in go to the stack
// of the switch-out sample, in samples of 1 ms with the thread's remainder carried; nothing for a thread that exited, for the idle task, or for a
// switch-out whose sample was lost; a tid used again starts afresh.
#include "daemon/off_cpu_spans.h"

#include <gtest/gtest.h>

#include <vector>

namespace tally::daemon {
namespace {

collect::SwitchRecord switch_record(uint32_t tid, uint64_t time, bool out) {
  collect::SwitchRecord r;
  r.origin.pid = 100;
  r.origin.tid = tid;
  r.origin.time = time;
  r.out = out;
  return r;
}

const std::vector<store::Frame> kStack{{1, 0x10}, {2, 0x20}};

TEST(OffCpuSpans, SpanGoesToTheSwitchOutSamplesStack) {
  OffCpuSpans off(3);
  EXPECT_EQ(off.event(), 3u);
  off.switch_sample(5, kStack);
  EXPECT_FALSE(off.switch_record(switch_record(5, 1000, true)));
  auto span = off.switch_record(switch_record(5, 2'501'000, false));
  ASSERT_TRUE(span);
  EXPECT_EQ(span->nanoseconds, 2'500'000u);
  EXPECT_EQ(span->samples, 2u);  // 0.5 ms carried
  EXPECT_EQ(std::vector<store::Frame>(span->frames.begin(), span->frames.end()), kStack);
  // A second switch-in closes nothing; a switch-out without its sample (lost) neither.
  EXPECT_FALSE(off.switch_record(switch_record(5, 2'600'000, false)));
  EXPECT_FALSE(off.switch_record(switch_record(5, 2'700'000, true)));
  EXPECT_FALSE(off.switch_record(switch_record(5, 2'800'000, false)));
  // The next sampled switch-out counts again, with that sample's stack.
  const std::vector<store::Frame> other{{3, 0x30}};
  off.switch_sample(5, other);
  off.switch_record(switch_record(5, 3'000'000, true));
  auto next = off.switch_record(switch_record(5, 3'600'000, false));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->nanoseconds, 600'000u);
  EXPECT_EQ(next->samples, 1u);  // 0.5 + 0.6 ms: one sample, 0.1 ms carried
  EXPECT_EQ(std::vector<store::Frame>(next->frames.begin(), next->frames.end()), other);
}

TEST(OffCpuSpans, ExitedThreadsAndTheIdleTaskCountNothing) {
  OffCpuSpans off(1);
  off.switch_sample(0, kStack);
  off.switch_record(switch_record(0, 1000, true));
  EXPECT_FALSE(off.switch_record(switch_record(0, 2000, false)));
  // A thread's last switch-out comes after its EXIT record.
  off.thread_exit(6, 5000);
  off.switch_sample(6, kStack);
  off.switch_record(switch_record(6, 5001, true));
  EXPECT_FALSE(off.switch_record(switch_record(6, 9000, false)));
  EXPECT_EQ(off.threads(), 1u);  // the exited thread's; none for the idle task
  // Forgotten after the grace period, not before.
  off.forget_exited(6000, 10000);
  EXPECT_EQ(off.threads(), 1u);
  off.forget_exited(20000, 10000);
  EXPECT_EQ(off.threads(), 0u);
}

TEST(OffCpuSpans, ATidUsedAgainStartsAfresh) {
  OffCpuSpans off(1);
  off.thread_exit(7, 1000);
  off.thread_started(7);
  off.switch_sample(7, kStack);
  off.switch_record(switch_record(7, 2000, true));
  auto span = off.switch_record(switch_record(7, 2500, false));
  ASSERT_TRUE(span);
  EXPECT_EQ(span->nanoseconds, 500u);
  EXPECT_EQ(span->samples, 0u);
  // The old thread's pending removal leaves the new one alone.
  off.forget_exited(1'000'000, 10);
  EXPECT_EQ(off.threads(), 1u);
}

}  // namespace
}  // namespace tally::daemon
