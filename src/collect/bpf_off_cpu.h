// Off-CPU spans measured in the kernel by a BPF program at sched_switch (tally record
// --off-cpu, issue 23; the program is src/collect/bpf/off_cpu.bpf.c, embedded as a
// skeleton when built with TALLY_HAVE_BPF). The perf_event_open path copies a callchain
// and two SWITCH records per switch to userspace; here the kernel keeps the stacks
// (interned by id) and sends one small record per completed span, so the recorder reads
// each distinct stack once. Needs root or CAP_BPF + CAP_PERFMON.
//
// The target set is the given processes and, as the program follows them, their threads
// and forked children. A thread already blocked when recording starts has no switch-out
// seen, so that first wait is not a span (the command target starts held, so it has none).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/error.h"

namespace tally::collect {

struct KernelOffCpuSpan {
  uint32_t pid = 0, tid = 0;
  uint64_t start = 0, end = 0;  // CLOCK_MONOTONIC ns, as the perf events' clock
  bool preempted = false;       // still runnable when switched out
  bool to_end = false;          // not switched in when recording stopped: `end` is unset
  // Leaf first: the kernel frames, then the user frames (as a perf callchain without its
  // context markers); empty when the stack could not be captured.
  std::span<const uint64_t> frames;
  // The words copied from the user stack pointer upward at the switch-out (empty when they
  // could not be read): where the callers the frame-pointer walk of `frames` skipped are
  // found with CFI (collect/frameless_callers.h).
  std::span<const uint64_t> user_words;
  // Nonzero: spans of one recorder with the same raw_stack have the same frames and words
  // (what their consumer derives from them can be kept by it); 0: not known.
  uint32_t raw_stack = 0;
};

class BpfOffCpu {
 public:
  // True when this build has the BPF program.
  static bool built();
  // Loads and attaches the program for `pids`; unsupported (with why) when it cannot be
  // (not built, not privileged, no BTF...). Spans are read from a thread of its own
  // until stop().
  // `from_exec`: the processes are followed from their next exec (a command started
  // held before its exec), as the perf events are enabled on exec.
  static core::Expected<std::unique_ptr<BpfOffCpu>> open(std::span<const pid_t> pids, bool from_exec);
  virtual ~BpfOffCpu() = default;

  // Detaches the program and reads the last spans.
  virtual void stop() = 0;
  // After stop(): every span in the order read, with its stack, then the spans still open.
  virtual void for_each_span(const std::function<void(const KernelOffCpuSpan&)>& visit) = 0;
  virtual uint64_t lost() const = 0;       // spans dropped: the ring buffer was full
  virtual uint64_t unstacked() const = 0;  // spans whose stack could not be captured
  // Spans with kernel frames only: the user stack was not captured (the kernel's stack map
  // is full, or another stack holds its hash bucket: bpf_get_stackid's EEXIST).
  virtual uint64_t without_user_stack() const = 0;
  // Spans of a thread taken off the CPU on its way back to user space: user frames only,
  // on purpose (the program leaves the exit path's kernel frames out).
  virtual uint64_t leaving_for_user() const = 0;
};

}  // namespace tally::collect
