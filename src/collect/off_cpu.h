// Off-CPU spans (tally record --off-cpu): from the moment a thread leaves the CPU to the
// moment it comes back, with why it left and the stack it left from.
//
// The kernel gives, per followed thread: a sample of the software event context-switches
// (period 1) taken as the thread switches out, with its kernel and user stack; and
// PERF_RECORD_SWITCH records for every switch out (flagged when the thread was preempted,
// i.e. still runnable) and in. A span opens at a switch-out and closes at the next
// switch-in of the same thread. The reason comes from the preempt flag, else from the
// kernel functions the thread blocked in (futex_wait, do_nanosleep, pipe_read, ...).
//
// Edges: a thread that exits switches out one last time (after its EXIT record): no span.
// A thread present when recording began whose first record is a switch-in was blocked
// before: its span starts at the recording's start and is marked. A span still open at the
// end (or a thread seen at the start and never again) ends at the recording's end, marked.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collect/perf_records.h"
#include "core/profile.h"

namespace tally::collect {

enum class OffCpuReason { sleep, futex, io, preempted, other, blocked };
// "sleep", "futex", "io", "preempted", "other" (blocked in some other kernel wait),
// "blocked" (blocked, but no kernel stack says where: kernel frames were not recorded).
std::string_view off_cpu_reason_name(OffCpuReason reason);

// The function names of /proc/PID/task/TID/stack ("[<0>] do_nanosleep+0x6d/0x150"), leaf
// first; empty when it cannot be read (it needs root).
std::vector<std::string> proc_kernel_stack(int pid, int tid);

// Why a thread that blocked (was not preempted) waits, from its kernel functions, leaf
// first; `blocked` when there are none.
OffCpuReason classify_blocked(std::span<const std::string_view> kernel_functions);

// True when the kernel frames of a switch-out (leaf first, from schedule) are the way back
// to user space: schedule called by exit_to_user_mode_loop (exit_to_usermode_loop before
// 5.10), after a system call returned or an interrupt taken in user mode. Such a thread was
// preempted, and those frames say nothing of why it waits: both recorders leave them out.
bool returning_to_user(std::span<const std::string_view> kernel_functions);

// Where a span's ends came from: the recording's start or end instead of a switch.
enum class SpanEdge { switches, from_start, to_end, whole };
std::string_view span_edge_name(SpanEdge edge);

// Stacks are ids into the caller's own table of distinct stacks (0: none), so that a span
// is a few words and a switch costs no allocation: a busy program switches 100k+ times a
// second, mostly from a few stacks.
using StackId = uint32_t;

struct OffCpuSpan {
  uint32_t pid = 0, tid = 0;
  uint64_t start = 0, end = 0;  // the events' clock (CLOCK_MONOTONIC), nanoseconds
  StackId stack = 0;            // the switch-out stack; 0: no switch-out sample
  OffCpuReason reason = OffCpuReason::blocked;
  SpanEdge edge = SpanEdge::switches;
};

class OffCpuSpans {
 public:
  // The recording's start (the events' clock): where spans of threads blocked before
  // it begin.
  explicit OffCpuSpans(uint64_t recording_start) : recording_start_(recording_start) {}

  // A thread that existed when recording began (tally record -p): if it only switches in,
  // or never shows up, it was blocked from the start, in `kernel_stack` (as
  // /proc/PID/task/TID/stack showed it then; 0 when unreadable) for `reason`.
  void thread_at_start(uint32_t pid, uint32_t tid, StackId kernel_stack = 0,
                       OffCpuReason reason = OffCpuReason::blocked);
  // The switch-out sample of `tid`: its stack and the reason its kernel frames give.
  void switch_sample(uint32_t pid, uint32_t tid, StackId stack, OffCpuReason reason);
  // A SWITCH record: the span it closes, if any.
  std::optional<OffCpuSpan> switch_record(const SwitchRecord& record);
  // The thread exited: what it does after is not waiting.
  void thread_exit(uint32_t tid);
  // The spans still open, ended at `recording_end`, and those of threads seen at the start
  // and never after (the whole recording). Spans are ordered by thread.
  std::vector<OffCpuSpan> finish(uint64_t recording_end);

 private:
  // One entry per thread, kept until the end: a switch looks up one entry and allocates
  // nothing.
  struct Thread {
    enum class State : uint8_t { running, sampled, off, at_start, exited };
    State state = State::running;
    // sampled: the switch-out sample, its SWITCH out not seen yet; off: switched out, not
    // back yet (span.start set); at_start: seen at the start, no record since.
    OffCpuSpan span;
  };
  uint64_t recording_start_;
  std::unordered_map<uint32_t, Thread> threads_;  // by tid
};

}  // namespace tally::collect
