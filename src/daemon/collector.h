// What `tally daemon` does with each record the sampler delivers: keeps every process's
// executable mappings (MMAP2, fork, exec, exit), and attributes each sample's frames to
// images and offsets (store::Frame) in the aggregate: an image is known by its build id
// (from the kernel's MMAP2, else read from the mapped file), else by its file's identity;
// an offset is the file offset of the address (the kernel's: from its _text).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collect/perf_open.h"
#include "collect/process_maps.h"
#include "collect/sample_stack.h"
#include "collect/sampler.h"
#include "daemon/off_cpu_spans.h"
#include "store/aggregate.h"

namespace tally::daemon {

class PushInterval;

struct CollectorStats {
  uint64_t samples = 0;
  uint64_t kernel_samples = 0;
  uint64_t unmapped_frames = 0;  // user addresses in no known mapping: a leaf is "[unknown]",
                                 // a caller ends the stack there
  uint64_t dropped_frames = 0;   // offsets past 4 GiB of their image (DCPI offsets are 32-bit)
  uint64_t lost = 0;             // records the kernel dropped (full ring)
};

class Collector : public collect::SampleConsumer {
 public:
  Collector(store::Aggregate& aggregate, collect::CallGraphMode call_graph);
  ~Collector() override;

  void on_sample(const collect::SampleRecord& sample) override;
  void on_mmap(const collect::MmapRecord& mmap) override;
  void on_comm(const collect::CommRecord& comm) override;
  void on_fork(const collect::TaskRecord& fork) override;
  void on_exit(const collect::TaskRecord& exit) override;
  void on_lost(const collect::LostRecord& lost) override;
  void on_switch(const collect::SwitchRecord& record) override;

  // Drops the maps of processes that exited more than `grace_ns` before `now_ns` (their
  // samples have been read by then): a daemon sees processes come and go for ever.
  void forget_exited(uint64_t now_ns, uint64_t grace_ns);
  // The kernel's _text as a read of /proc/kallsyms already found it (the push symbolizer's):
  // the collector then reads no kallsyms of its own. 0: it does.
  void set_kernel_text_start(uint64_t text) { kernel_start_ = text; }
  size_t processes() const { return processes_.size(); }
  const CollectorStats& stats() const { return stats_; }
  // Every sample also goes to `push` (tally daemon --push), with its process id.
  void also_push_to(PushInterval* push) { push_ = push; }
  // tally daemon --off-cpu: samples of `event` (context-switches) are switch-outs, and the
  // time until the switch-in is added to that event (off_cpu_spans.h).
  void count_off_cpu(size_t event) { off_cpu_.emplace(event); }

 private:
  uint32_t image_of(pid_t pid, const collect::ImageMapping& mapping);
  store::Frame user_frame(pid_t pid, uint64_t address);
  store::Frame kernel_frame(uint64_t address);

  store::Aggregate& aggregate_;
  PushInterval* push_ = nullptr;
  std::optional<OffCpuSpans> off_cpu_;
  collect::SampleStack sample_stack_;
  collect::ProcessTable processes_;
  std::unordered_map<std::string, uint32_t> images_;  // by mapping identity
  std::vector<std::pair<pid_t, uint64_t>> exited_;    // pid, exit time
  int64_t kernel_image_ = -1;
  uint64_t kernel_start_ = 0;
  int64_t unknown_image_ = -1;
  CollectorStats stats_;
  std::vector<store::Frame> frames_;  // scratch, reused across samples
};

}  // namespace tally::daemon
