// tally daemon --off-cpu: the time threads spend off the CPU, per stack they left from.
// The context-switches event (period 1, with call stacks) samples each thread as it
// switches out; the PERF_RECORD_SWITCH records on the same event say when it left and came
// back. The span's time goes to the stack of its switch-out sample, as an event "off-cpu"
// of the database beside the CPU samples, in samples of 1 ms (a DCPI count is a number of
// samples of one period; a thread's remainder under 1 ms carries to its next span, so
// that short waits add up and its total stays within 1 ms of the truth). Preempted time counts
// like blocked time (the daemon keeps no labels to tell them apart); a span still open when
// the daemon stops is not counted.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collect/perf_records.h"
#include "store/aggregate.h"

namespace tally::daemon {

class OffCpuSpans {
 public:
  explicit OffCpuSpans(size_t event) : event_(event) {}
  size_t event() const { return event_; }

  // The switch-out sample of `tid`, its frames as the collector attributed them.
  void switch_sample(uint32_t tid, std::span<const store::Frame> frames);
  // A SWITCH record. When it ends a span: the span's frames and nanoseconds.
  static constexpr uint64_t kSampleNs = 1'000'000;
  struct Span {
    std::span<const store::Frame> frames;
    uint64_t nanoseconds = 0;
    uint64_t samples = 0;  // of kSampleNs, with the thread's carried remainder
  };
  std::optional<Span> switch_record(const collect::SwitchRecord& record);
  // A thread (or process) began: a tid used again starts afresh.
  void thread_started(uint32_t tid) { threads_[tid] = Thread{}; }
  // The thread exited: its last switch-out (after the EXIT record) is no wait.
  void thread_exit(uint32_t tid, uint64_t time);
  // Drops the threads that exited more than `grace_ns` before `now_ns`: a daemon sees
  // threads come and go for ever.
  void forget_exited(uint64_t now_ns, uint64_t grace_ns);
  size_t threads() const { return threads_.size(); }

 private:
  // One per thread, its frame vector reused: a switch allocates nothing.
  struct Thread {
    std::vector<store::Frame> frames;
    uint64_t out_time = 0;
    uint64_t carried_ns = 0;  // under kSampleNs, from the spans before
    bool sampled = false, off = false, exited = false;
  };
  size_t event_;
  std::unordered_map<uint32_t, Thread> threads_;
  std::vector<std::pair<uint32_t, uint64_t>> exited_;  // tid, exit time
};

}  // namespace tally::daemon
