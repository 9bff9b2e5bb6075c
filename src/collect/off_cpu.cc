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

// A span with no switch-out sample: one of its ends is the recording's.
OffCpuSpan edge_span(uint32_t pid, uint32_t tid, uint64_t start, uint64_t end, SpanEdge edge) {
  OffCpuSpan span;
  span.pid = pid;
  span.tid = tid;
  span.start = start;
  span.end = end;
  span.edge = edge;
  return span;
}

}  // namespace

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

void OffCpuSpans::thread_at_start(uint32_t pid, uint32_t tid,
                                  std::vector<core::LocationId> kernel_stack, OffCpuReason reason) {
  at_start_[tid] = AtStart{.pid = pid, .stack = std::move(kernel_stack), .reason = reason};
}

OffCpuSpan OffCpuSpans::from_start(uint32_t tid, AtStart&& at_start, uint64_t end,
                                   SpanEdge edge) const {
  OffCpuSpan span = edge_span(at_start.pid, tid, recording_start_, end, edge);
  span.stack = std::move(at_start.stack);
  span.reason = at_start.reason;
  return span;
}

void OffCpuSpans::switch_sample(uint32_t pid, uint32_t tid, uint64_t time,
                                std::span<const core::LocationId> stack, OffCpuReason reason) {
  at_start_.erase(tid);
  if (exited_.count(tid)) return;
  Pending& p = sampled_[tid];
  p.pid = pid;
  p.time = time;
  p.reason = reason;
  p.stack.assign(stack.begin(), stack.end());
}

std::optional<OffCpuSpan> OffCpuSpans::switch_record(const SwitchRecord& record) {
  const uint32_t tid = record.origin.tid;
  if (tid == 0 || exited_.count(tid)) return std::nullopt;  // the idle task, or a dead thread
  std::optional<AtStart> at_start;
  if (auto it = at_start_.find(tid); it != at_start_.end()) {
    at_start = std::move(it->second);
    at_start_.erase(it);
  }
  if (record.out) {
    OffCpuSpan span;
    span.pid = record.origin.pid;
    span.tid = tid;
    span.start = record.origin.time;
    if (auto it = sampled_.find(tid); it != sampled_.end()) {
      // The sample is taken just before the SWITCH record of the same switch-out.
      span.stack = std::move(it->second.stack);
      span.reason = it->second.reason;
      sampled_.erase(it);
    }
    if (record.preempted) span.reason = OffCpuReason::preempted;
    open_[tid] = std::move(span);
    return std::nullopt;
  }
  auto it = open_.find(tid);
  if (it == open_.end()) {
    if (!at_start || record.origin.time < recording_start_) return std::nullopt;
    // Off the CPU since before the recording: counted from its start.
    return from_start(tid, std::move(*at_start), record.origin.time, SpanEdge::from_start);
  }
  OffCpuSpan span = std::move(it->second);
  open_.erase(it);
  span.end = std::max(record.origin.time, span.start);
  return span;
}

void OffCpuSpans::thread_exit(uint32_t tid) {
  exited_.insert(tid);
  open_.erase(tid);
  sampled_.erase(tid);
  at_start_.erase(tid);
}

std::vector<OffCpuSpan> OffCpuSpans::finish(uint64_t recording_end) {
  std::vector<OffCpuSpan> spans;
  for (auto& [tid, span] : open_) {
    if (span.start >= recording_end) continue;
    span.end = recording_end;
    span.edge = SpanEdge::to_end;
    spans.push_back(std::move(span));
  }
  for (auto& [tid, at_start] : at_start_)
    if (recording_end > recording_start_)
      spans.push_back(from_start(tid, std::move(at_start), recording_end, SpanEdge::whole));
  open_.clear();
  at_start_.clear();
  std::sort(spans.begin(), spans.end(),
            [](const OffCpuSpan& a, const OffCpuSpan& b) { return a.tid < b.tid; });
  return spans;
}

}  // namespace tally::collect
