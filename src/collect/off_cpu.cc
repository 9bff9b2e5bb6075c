#include "collect/off_cpu.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <utility>

namespace tally::collect {

namespace {

// Kernel functions that say why a thread waits, by substring, checked from the leaf
// outward: the innermost telling frame wins (a futex wait inside a read is a futex).
constexpr std::array<std::pair<std::string_view, OffCpuReason>, 24> kTellingFunctions{{
    {"futex", OffCpuReason::futex},
    {"nanosleep", OffCpuReason::sleep},
    {"schedule_hrtimeout", OffCpuReason::sleep},
    {"msleep", OffCpuReason::sleep},
    {"sys_pause", OffCpuReason::sleep},
    {"io_schedule", OffCpuReason::io},
    {"folio_wait", OffCpuReason::io},
    {"wait_on_page", OffCpuReason::io},
    {"bit_wait_io", OffCpuReason::io},
    {"blk_", OffCpuReason::io},
    {"pipe_read", OffCpuReason::io},
    {"pipe_write", OffCpuReason::io},
    {"wait_for_partner", OffCpuReason::io},
    {"sock_", OffCpuReason::io},
    {"sk_wait", OffCpuReason::io},
    {"tcp_", OffCpuReason::io},
    {"unix_stream", OffCpuReason::io},
    {"unix_dgram", OffCpuReason::io},
    {"ep_poll", OffCpuReason::io},
    {"do_select", OffCpuReason::io},
    {"do_sys_poll", OffCpuReason::io},
    {"n_tty_read", OffCpuReason::io},
    {"wait_woken", OffCpuReason::io},
    {"io_uring", OffCpuReason::io},
}};

}  // namespace

bool returning_to_user(std::span<const std::string_view> kernel_functions) {
  for (size_t i = 0; i < kernel_functions.size(); ++i) {
    const std::string_view name = kernel_functions[i];
    if (name == "schedule" || name == "__schedule") continue;
    return name.find("exit_to_user") != std::string_view::npos;  // the caller of schedule
  }
  return false;
}

std::string_view off_cpu_reason_name(OffCpuReason reason) {
  switch (reason) {
    case OffCpuReason::sleep: return "sleep";
    case OffCpuReason::futex: return "futex";
    case OffCpuReason::io: return "io";
    case OffCpuReason::preempted: return "preempted";
    case OffCpuReason::other: return "other";
    case OffCpuReason::blocked: return "blocked";
  }
  return "blocked";
}

std::string_view span_edge_name(SpanEdge edge) {
  switch (edge) {
    case SpanEdge::switches: return "";
    case SpanEdge::from_start: return "from_start";
    case SpanEdge::to_end: return "to_end";
    case SpanEdge::whole: return "whole";
  }
  return "";
}

OffCpuReason classify_blocked(std::span<const std::string_view> kernel_functions) {
  if (kernel_functions.empty()) return OffCpuReason::blocked;
  for (std::string_view name : kernel_functions)
    for (const auto& [needle, reason] : kTellingFunctions)
      if (name.find(needle) != std::string_view::npos) return reason;
  return OffCpuReason::other;
}

std::vector<std::string> proc_kernel_stack(int pid, int tid) {
  std::vector<std::string> names;
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stack");
  for (std::string line; std::getline(in, line);) {
    size_t begin = line.find("] ");
    if (begin == std::string::npos) continue;
    begin += 2;
    size_t end = line.find_first_of("+ ", begin);
    if (end == std::string::npos) end = line.size();
    if (end > begin) names.push_back(line.substr(begin, end - begin));
  }
  return names;
}

void OffCpuSpans::thread_at_start(uint32_t pid, uint32_t tid, StackId kernel_stack,
                                  OffCpuReason reason) {
  Thread& t = threads_[tid];
  if (t.state == Thread::State::exited) return;
  t.state = Thread::State::at_start;
  t.span = OffCpuSpan{.pid = pid, .tid = tid, .start = recording_start_, .stack = kernel_stack,
                      .reason = reason};
}

void OffCpuSpans::switch_sample(uint32_t pid, uint32_t tid, StackId stack, OffCpuReason reason) {
  Thread& t = threads_[tid];
  if (t.state == Thread::State::exited) return;
  t.state = Thread::State::sampled;
  t.span = OffCpuSpan{.pid = pid, .tid = tid, .stack = stack, .reason = reason};
}

std::optional<OffCpuSpan> OffCpuSpans::switch_record(const SwitchRecord& record) {
  const uint32_t tid = record.origin.tid;
  if (tid == 0) return std::nullopt;  // the idle task
  if (record.out) {
    Thread& t = threads_[tid];
    if (t.state == Thread::State::exited) return std::nullopt;  // a dead thread's last switch
    // The sample is taken just before the SWITCH record of the same switch-out.
    if (t.state != Thread::State::sampled) t.span = OffCpuSpan{};
    t.span.pid = record.origin.pid;
    t.span.tid = tid;
    t.span.start = record.origin.time;
    if (record.preempted) t.span.reason = OffCpuReason::preempted;
    t.state = Thread::State::off;
    return std::nullopt;
  }
  auto it = threads_.find(tid);
  if (it == threads_.end()) return std::nullopt;
  Thread& t = it->second;
  switch (t.state) {
    case Thread::State::off:
      t.state = Thread::State::running;
      t.span.end = std::max(record.origin.time, t.span.start);
      return t.span;
    case Thread::State::at_start:
      t.state = Thread::State::running;
      if (record.origin.time < recording_start_) return std::nullopt;
      // Off the CPU since before the recording: counted from its start.
      t.span.end = record.origin.time;
      t.span.edge = SpanEdge::from_start;
      return t.span;
    case Thread::State::running:
    case Thread::State::sampled:  // its SWITCH out is still to come
    case Thread::State::exited:
      return std::nullopt;
  }
  return std::nullopt;
}

void OffCpuSpans::thread_exit(uint32_t tid) { threads_[tid].state = Thread::State::exited; }

std::vector<OffCpuSpan> OffCpuSpans::finish(uint64_t recording_end) {
  std::vector<OffCpuSpan> spans;
  for (auto& [tid, t] : threads_) {
    if (t.state == Thread::State::off && t.span.start < recording_end) {
      t.span.end = recording_end;
      t.span.edge = SpanEdge::to_end;
      spans.push_back(t.span);
    } else if (t.state == Thread::State::at_start && recording_end > recording_start_) {
      t.span.end = recording_end;
      t.span.edge = SpanEdge::whole;
      spans.push_back(t.span);
    }
    if (t.state == Thread::State::off || t.state == Thread::State::at_start)
      t.state = Thread::State::running;
  }
  std::sort(spans.begin(), spans.end(),
            [](const OffCpuSpan& a, const OffCpuSpan& b) { return a.tid < b.tid; });
  return spans;
}

}  // namespace tally::collect
