// Off-CPU spans from switch samples and SWITCH records (collect/off_cpu.h), on hand-made
// sequences: what the kernel sends for a block, a preemption, a thread blocked since
// before the recording, one still blocked at its end, and one that exits.
#include "collect/off_cpu.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace tally::collect {
namespace {

SwitchRecord switch_record(uint32_t tid, uint64_t time, bool out, bool preempted = false) {
  SwitchRecord r;
  r.origin.pid = 100;
  r.origin.tid = tid;
  r.origin.time = time;
  r.out = out;
  r.preempted = preempted;
  return r;
}

TEST(OffCpuReason, FromTheInnermostTellingKernelFunction) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(classify_blocked(V{"__schedule", "schedule", "futex_do_wait", "__futex_wait"}),
            OffCpuReason::futex);
  EXPECT_EQ(classify_blocked(V{"schedule", "do_nanosleep", "hrtimer_nanosleep"}), OffCpuReason::sleep);
  EXPECT_EQ(classify_blocked(V{"schedule", "anon_pipe_read", "vfs_read"}), OffCpuReason::io);
  EXPECT_EQ(classify_blocked(V{"schedule", "io_schedule", "folio_wait_bit_common"}), OffCpuReason::io);
  EXPECT_EQ(classify_blocked(V{"schedule", "do_wait", "kernel_wait4"}), OffCpuReason::other);
  // A futex wait inside a read (e.g. a FUSE file): the innermost telling frame wins.
  EXPECT_EQ(classify_blocked(V{"schedule", "futex_wait_queue", "pipe_read"}), OffCpuReason::futex);
  EXPECT_EQ(classify_blocked(V{}), OffCpuReason::blocked);
}

// Kernel frames as this machine's 6.18 kernel gives them (tally record --off-cpu -g fp).
TEST(OffCpuReason, TheWayBackToUserSpaceIsToldFromTheCallerOfSchedule) {
  using V = std::vector<std::string_view>;
  // Preempted after write() returned, and after a timer interrupt in user code.
  EXPECT_TRUE(returning_to_user(V{"schedule", "exit_to_user_mode_loop", "do_syscall_64",
                                  "entry_SYSCALL_64_after_hwframe"}));
  EXPECT_TRUE(returning_to_user(V{"__schedule", "schedule", "exit_to_user_mode_loop",
                                  "irqentry_exit_to_user_mode", "asm_sysvec_apic_timer_interrupt"}));
  EXPECT_TRUE(returning_to_user(V{"schedule", "exit_to_usermode_loop", "do_syscall_64"}));  // 4.x
  // Waiting, or yielding, inside the call; preempted inside the kernel.
  EXPECT_FALSE(returning_to_user(V{"schedule", "anon_pipe_read", "vfs_read", "ksys_read",
                                   "do_syscall_64"}));
  EXPECT_FALSE(returning_to_user(V{"schedule", "__x64_sys_sched_yield", "do_syscall_64"}));
  EXPECT_FALSE(returning_to_user(V{"__schedule", "preempt_schedule_irq", "irqentry_exit",
                                   "asm_sysvec_apic_timer_interrupt", "clear_page_erms",
                                   "irqentry_exit_to_user_mode"}));
  EXPECT_FALSE(returning_to_user(V{}));
}

TEST(OffCpuSpans, BlockThenWakeGivesTheSampleStackAndReason) {
  OffCpuSpans spans(0);
  const StackId stack = 7;
  spans.switch_sample(100, 5, stack, OffCpuReason::sleep);
  EXPECT_FALSE(spans.switch_record(switch_record(5, 1001, true)));
  auto span = spans.switch_record(switch_record(5, 31001, false));
  ASSERT_TRUE(span);
  EXPECT_EQ(span->tid, 5u);
  EXPECT_EQ(span->start, 1001u);
  EXPECT_EQ(span->end, 31001u);
  EXPECT_EQ(span->reason, OffCpuReason::sleep);
  EXPECT_EQ(span->stack, stack);
  EXPECT_EQ(span->edge, SpanEdge::switches);
  // The next switch-in without a switch-out closes nothing.
  EXPECT_FALSE(spans.switch_record(switch_record(5, 40000, false)));
}

TEST(OffCpuSpans, PreemptedIsCountedApartFromBlocked) {
  OffCpuSpans spans(0);
  spans.switch_sample(100, 5, 1, OffCpuReason::other);
  spans.switch_record(switch_record(5, 1000, true, /*preempted=*/true));
  auto span = spans.switch_record(switch_record(5, 4000, false));
  ASSERT_TRUE(span);
  EXPECT_EQ(span->reason, OffCpuReason::preempted);
  // Without a switch-out sample (the fallback): no stack, blocked.
  spans.switch_record(switch_record(6, 5000, true));
  auto bare = spans.switch_record(switch_record(6, 9000, false));
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->stack, 0u);
  EXPECT_EQ(bare->reason, OffCpuReason::blocked);
}

TEST(OffCpuSpans, RecordingEdges) {
  OffCpuSpans spans(1000);
  // Blocked before the start, woken during the recording: from the start.
  spans.thread_at_start(100, 5, 42, OffCpuReason::futex);
  // Blocked all along: the whole recording.
  spans.thread_at_start(100, 6);
  // Running at the start (its first record is a switch-out): an ordinary span.
  spans.thread_at_start(100, 7);
  auto woken = spans.switch_record(switch_record(5, 3000, false));
  ASSERT_TRUE(woken);
  EXPECT_EQ(woken->start, 1000u);
  EXPECT_EQ(woken->end, 3000u);
  EXPECT_EQ(woken->edge, SpanEdge::from_start);
  EXPECT_EQ(woken->reason, OffCpuReason::futex);
  EXPECT_EQ(woken->stack, 42u);
  spans.switch_record(switch_record(7, 2000, true));
  // A thread that exits: its last switch-out opens nothing.
  spans.thread_exit(8);
  spans.switch_sample(100, 8, 3, OffCpuReason::other);
  spans.switch_record(switch_record(8, 2500, true));
  auto rest = spans.finish(5000);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].tid, 6u);
  EXPECT_EQ(rest[0].edge, SpanEdge::whole);
  EXPECT_EQ(rest[0].start, 1000u);
  EXPECT_EQ(rest[0].end, 5000u);
  EXPECT_EQ(rest[1].tid, 7u);
  EXPECT_EQ(rest[1].edge, SpanEdge::to_end);
  EXPECT_EQ(rest[1].start, 2000u);
  EXPECT_EQ(rest[1].end, 5000u);
}

}  // namespace
}  // namespace tally::collect
