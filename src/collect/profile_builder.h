// Turns what a Sampler delivers into a core::Profile (tally record): "samples/count", then
// one sample type per event (cpu-clock/nanoseconds, page-faults/count; the first event is
// the default type), each sample weighted by the period
// the kernel actually counted, call stacks from the kernel's callchain (-g fp) or unwound
// from the copied user stack (-g dwarf), mappings from MMAP2 per process deduplicated per
// image, labels pid, tid, comm and cpu. Samples are merged as they come, so memory grows
// with distinct stacks, not with the recording's length. Off-CPU spans (--off-cpu) are kept
// as a few words each, their stacks interned, and become samples a batch at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collect/bpf_off_cpu.h"
#include "collect/event_spec.h"
#include "collect/perf_open.h"
#include "collect/sampler.h"
#include "core/profile.h"

namespace tally::collect {

struct ProfileBuilderOptions {
  std::vector<EventSpec> events;
  CallGraphMode call_graph = CallGraphMode::dwarf;
  bool kernel_frames = true;  // keep the kernel part of stacks (when it was sampled)
  // The pid whose executable should be the profile's first mapping (pprof's main binary);
  // 0: the first process seen; -1: none (system-wide).
  pid_t main_pid = 0;
  // Nominal period for the profile header: -c PERIOD, or 1e9/HZ ns for time events.
  int64_t period = 0;
  // Where kernel frames get their names; "" leaves them unnamed.
  std::string kallsyms = "/proc/kallsyms";
  // tally record --off-cpu (collect/off_cpu.h): the sample types are samples, cpu (the
  // first event, which counts time), the other events, off-cpu and wall (the default:
  // cpu + off-cpu per stack); every sample gets a "timestamp" label (nanoseconds since the
  // recording began) and off-CPU samples a "reason" label. `switch_event` (an index into
  // events, not a sample type) is the context-switches event sampled at each switch-out;
  // SIZE_MAX: there is none, and off-CPU spans come from SWITCH records without stacks.
  bool off_cpu = false;
  size_t switch_event = SIZE_MAX;
  // --off-cpu --no-timestamps: no timestamp labels, so that samples of one stack merge and
  // memory grows with distinct stacks again, not with the number of context switches.
  bool timestamps = true;
  // --off-cpu recorded by the BPF program (collect/bpf_off_cpu.h): spans arrive whole
  // through on_kernel_span, none from SWITCH records or /proc at the start.
  bool kernel_spans = false;
};

struct ProfileBuilderStats {
  uint64_t samples = 0;
  uint64_t kernel_samples = 0;     // the sample was taken in the kernel
  uint64_t frames = 0;
  uint64_t unmapped_frames = 0;    // user addresses in no known mapping
  uint64_t unwind_truncated = 0;   // dwarf: the unwind stopped before the outermost frame
  uint64_t stack_copy_full = 0;    // dwarf: ... because it needed memory past the stack copy
  uint64_t off_cpu_spans = 0;      // --off-cpu: spans recorded
  uint64_t off_cpu_unstacked = 0;  // ... of them without a switch-out stack
  uint64_t off_cpu_edge = 0;       // ... of them cut by the recording's start or end
};

class ProfileBuilder : public SampleConsumer {
 public:
  explicit ProfileBuilder(ProfileBuilderOptions options);
  ~ProfileBuilder() override;

  void on_sample(const SampleRecord& sample) override;
  void on_mmap(const MmapRecord& mmap) override;
  void on_comm(const CommRecord& comm) override;
  void on_fork(const TaskRecord& fork) override;
  void on_exit(const TaskRecord& exit) override;
  void on_switch(const SwitchRecord& record) override;
  // --off-cpu with kernel_spans: a span the BPF program measured, after the sampler's
  // records (the mappings of its user frames come from them) and recording_ended (spans
  // still open end there).
  void on_kernel_span(const KernelOffCpuSpan& span);

  // --off-cpu: when the recording began and ended (CLOCK_MONOTONIC, the events' clock):
  // the timestamp labels count from the start; spans still open at the end are cut there.
  void recording_started(uint64_t monotonic_ns);
  void recording_ended(uint64_t monotonic_ns);

  const ProfileBuilderStats& stats() const;
  // The profile so far, main binary first, in canonical order; the builder is spent.
  core::Profile finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tally::collect
