// Sampling with perf_event_open: owns the counters of one recording (a command, running
// processes, or every CPU), their ring buffers, and hands every record to a consumer in
// time order. `tally record` builds a profile from what it receives; `tally daemon` keeps
// per-image histograms. The sampler keeps no samples itself: memory stays bounded by the
// ring buffers whatever the recording's length.
//
// Targets and how their threads are followed:
//   command        pid of a child stopped before exec (collect/child_command.h): one event
//                  per CPU on that pid with inherit + enable_on_exec, so counting starts
//                  at exec and every thread and child process it creates is followed.
//   processes      -p PID[,PID]: every thread listed in /proc/PID/task gets one event per
//                  CPU with inherit, so the threads they create later are followed by the
//                  kernel. /proc/PID/task is listed again after attaching, until no thread
//                  is new, so a thread created while attaching is not missed; a thread the
//                  kernel already follows (its FORK record was seen) is not attached twice.
//   system_wide    -a: one event per CPU for every process (pid -1).
// All events of one CPU write into one ring (PERF_EVENT_IOC_SET_OUTPUT to the first);
// the kernel refuses an mmap'd ring for an inherited per-task (cpu -1) event, hence the
// per-CPU events even for one command.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collect/event_spec.h"
#include "collect/perf_open.h"
#include "collect/perf_records.h"
#include "core/error.h"

namespace tally::collect {

// Receives what the sampler reads. Records reach the consumer in time order across all
// rings (a library's MMAP2 comes before the samples in it); the spans inside a record are
// valid during the call only. Called on the thread that calls Sampler::read.
class SampleConsumer {
 public:
  virtual ~SampleConsumer() = default;
  virtual void on_sample(const SampleRecord& sample) = 0;
  virtual void on_mmap(const MmapRecord&) {}
  virtual void on_comm(const CommRecord&) {}
  virtual void on_fork(const TaskRecord&) {}
  virtual void on_exit(const TaskRecord&) {}
  virtual void on_lost(const LostRecord&) {}
  virtual void on_throttle(const ThrottleRecord&) {}
  virtual void on_lost_samples(const LostSamplesRecord&) {}
  virtual void on_switch(const SwitchRecord&) {}
};

enum class TargetKind { command, processes, system_wide };

struct SamplerConfig {
  std::vector<EventSpec> events;  // at least one; SampleRecord::event indexes this list
  SamplingOptions sampling;       // inherit / enable_on_exec are set by the sampler
  // Per event (by index): a fixed sample period instead of sampling.period / frequency;
  // missing or 0: the common setting (tally daemon -e EVENT:PERIOD).
  std::vector<uint64_t> periods;
  // Per event (by index): bytes of user stack copied per sample with -g dwarf instead of
  // sampling.stack_bytes; missing or 0: the common setting (tally daemon --off-cpu's
  // switch-out event copies less, as it fires at every context switch).
  std::vector<uint32_t> stack_bytes;
  TargetKind target = TargetKind::command;
  std::vector<pid_t> pids;  // command: the child's pid; processes: the -p list
  std::vector<int> cpus;    // empty: every online CPU
  // Data pages of each ring (a power of two); 0 picks a size from the call-graph mode
  // (larger for dwarf, whose samples carry the stack copy), reduced when the kernel's
  // perf_event_mlock_kb limit refuses it.
  size_t ring_pages = 0;
  // Before the first real record, hand the consumer MMAP2 and COMM records made from
  // /proc for what was running already (processes: their pids; system_wide: every
  // process), with time 0, so that samples of code mapped before sampling began resolve.
  bool synthesize_existing = true;
  // The event (by index) that also asks for PERF_RECORD_SWITCH records (attr.context_switch:
  // every switch in and out of the followed threads, tally record --off-cpu); -1: none.
  int context_switch_event = -1;
};

struct SamplerStats {
  uint64_t samples = 0;        // sample records delivered
  uint64_t lost = 0;           // records the kernel dropped because a ring was full (LOST)
  uint64_t lost_samples = 0;   // samples dropped before writing (LOST_SAMPLES)
  uint64_t throttled = 0;      // THROTTLE records
  uint64_t bad_records = 0;    // records that failed to decode (skipped, counted)
  uint64_t bytes = 0;          // ring bytes read
  uint64_t rings = 0;          // ring buffers mapped
  uint64_t events_opened = 0;  // perf event file descriptors
  uint64_t threads_attached = 0;  // processes: threads attached to, rescans included
  uint64_t switches = 0;       // SWITCH records delivered (in and out)
  uint64_t build_id_files = 0;  // mapped files read for their build id (FileBuildIds)
};

class Sampler {
 public:
  // Opens and maps the counters. For a command, counting begins when the child execs; for
  // processes and system_wide, as each counter opens (so that the FORK records of threads
  // created while attaching are seen). Records wait in the rings until read().
  static core::Expected<std::unique_ptr<Sampler>> open(const SamplerConfig& config);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Counting on again after disable().
  core::Status enable();
  // Stops counting (the rings keep what was written; read it with drain()).
  void disable();

  // Waits up to `timeout_ms` (-1: forever, until data or a signal) for a ring to fill past
  // its watermark, then reads every ring and delivers the records that are safe to order
  // (those older than the start of this read); newer ones are held for the next call.
  // A signal ends the wait early (no error). Errors: a ring's control page is corrupt.
  core::Status read(SampleConsumer& consumer, int timeout_ms);
  // Reads everything left and delivers everything held: call after disable() or once the
  // targets have exited.
  core::Status drain(SampleConsumer& consumer);

  const SamplerStats& stats() const;
  const SamplerConfig& config() const;
  // perf_event_attr as opened (the first event's), e.g. to see whether kernel frames were
  // excluded.
  const perf_event_attr& attr(size_t event) const;
  // Why kernel space is not sampled, when the first open was refused for it (e.g.
  // perf_event_paranoid) and user space alone was allowed; "" when it is sampled (or the
  // events exclude it by their own :u).
  const std::string& kernel_excluded() const;

 private:
  struct State;
  explicit Sampler(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace tally::collect
