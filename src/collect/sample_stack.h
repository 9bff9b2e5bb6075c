// A sample's call stack as the addresses of its frames, leaf first, whatever way it was
// recorded: the kernel's callchain (-g fp, kernel frames always), the user stack copy
// unwound with the binaries' CFI (-g dwarf), or the sampled address alone (-g none).
// Shared by tally record's profile builder and tally daemon's collector.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collect/callchain.h"
#include "collect/dwarf_unwind.h"
#include "collect/perf_open.h"
#include "collect/perf_records.h"
#include "collect/process_maps.h"

namespace tally::collect {

class SampleStack {
 public:
  // kernel_frames: keep the kernel part of stacks (when the kernel was sampled).
  explicit SampleStack(CallGraphMode mode, bool kernel_frames = true);
  ~SampleStack();

  // The frames of `sample`, leaf first, kernel frames before user ones. The leaf is where
  // the sample was taken; every other frame is a return address, which points after its
  // call: it is given minus one, inside the call (as pprof and gperftools do). Never empty.
  // Valid until the next call.
  std::span<const uint64_t> frames(const SampleRecord& sample, const ProcessTable& processes);

  // Drops the unwinder's state for a process that exited or exec'd.
  void forget(pid_t pid);
  // What the DWARF unwinder did so far (zero unless the mode is dwarf).
  UnwindStats unwind_stats() const;

 private:
  CallGraphMode mode_;
  bool kernel_frames_;
  std::unique_ptr<DwarfUnwinder> unwinder_;
  // Scratch, reused across samples.
  SplitCallchain split_;
  std::vector<uint64_t> pcs_, user_;
};

}  // namespace tally::collect
