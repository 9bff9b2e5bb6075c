#include "daemon/off_cpu_spans.h"

#include <algorithm>

namespace tally::daemon {

void OffCpuSpans::switch_sample(uint32_t tid, std::span<const store::Frame> frames) {
  if (tid == 0) return;  // the idle task
  Thread& t = threads_[tid];
  if (t.exited) return;
  t.frames.assign(frames.begin(), frames.end());
  t.sampled = true;
  t.off = false;
}

std::optional<OffCpuSpans::Span> OffCpuSpans::switch_record(const collect::SwitchRecord& record) {
  const uint32_t tid = record.origin.tid;
  if (tid == 0) return std::nullopt;  // the idle task
  auto it = threads_.find(tid);
  if (it == threads_.end() || it->second.exited) return std::nullopt;
  Thread& t = it->second;
  if (record.out) {
    // The sample is taken just before the SWITCH record of the same switch-out; without
    // one (a lost record) the span has no stack and is not counted.
    t.off = t.sampled;
    t.sampled = false;
    t.out_time = record.origin.time;
    return std::nullopt;
  }
  if (!t.off) return std::nullopt;
  t.off = false;
  const uint64_t ns = record.origin.time > t.out_time ? record.origin.time - t.out_time : 0;
  const uint64_t total = t.carried_ns + ns;
  t.carried_ns = total % kSampleNs;
  return Span{t.frames, ns, total / kSampleNs};
}

void OffCpuSpans::thread_exit(uint32_t tid, uint64_t time) {
  Thread& t = threads_[tid];
  t.exited = true;
  t.sampled = t.off = false;
  exited_.emplace_back(tid, time);
}

void OffCpuSpans::forget_exited(uint64_t now_ns, uint64_t grace_ns) {
  std::erase_if(exited_, [&](const auto& e) {
    if (e.second + grace_ns > now_ns) return false;
    // A tid used again since has a live entry: keep it.
    if (auto it = threads_.find(e.first); it != threads_.end() && it->second.exited) threads_.erase(it);
    return true;
  });
}

}  // namespace tally::daemon
