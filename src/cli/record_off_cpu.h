// tally record --off-cpu: which events record the off-CPU spans, and the fallback when
// the kernel refuses them.
//
// What is used, and what it needs:
//   stacks      the software event context-switches with sample_period 1, sampled with the
//               recording's call graph (kernel callchain + user stack) at every switch-out,
//               plus PERF_RECORD_SWITCH records (attr.context_switch on the same event) for
//               the switch-in times and the preempted flag. The switch-out happens in kernel
//               mode, so the event must count the kernel: kernel.perf_event_paranoid <= 1 or
//               CAP_PERFMON for a process (<= 0 for -a). No tracefs, no CAP_SYS_ADMIN.
//   fallback    when that is refused (paranoid 2 without CAP_PERFMON: the kernel drops a
//               user-only switch sample, as its registers are the kernel's), or when
//               TALLY_OFF_CPU_FALLBACK=1 in the environment (to test this path):
//               PERF_RECORD_SWITCH records alone, on the cpu-clock event, which paranoid 2
//               allows for one's own processes. Off-CPU time per thread is still exact,
//               preempted apart from blocked, but without stacks ("[off-CPU, no stack
//               recorded]") or the kind of wait.
//   bpf         a BPF program at sched_switch (collect/bpf_off_cpu.h) measures each span in
//               the kernel and sends one record per span; stacks are interned there. Used
//               for `-- COMMAND` with -g fp when it can be loaded (root, or CAP_BPF +
//               CAP_PERFMON) and the build has it; TALLY_OFF_CPU_BACKEND=perf|bpf chooses
//               (bpf: also with -g dwarf, whose user stacks it then walks by frame
//               pointers). The context-switches event is then not
//               opened; cpu-clock still samples on-CPU time and brings the mappings.
// The sched:sched_switch tracepoint would need tracefs mounted and readable (for the
// event id) and, for its raw fields, paranoid -1 or CAP_PERFMON: not used.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "collect/bpf_off_cpu.h"
#include "collect/profile_builder.h"
#include "collect/sampler.h"
#include "core/error.h"

namespace tally::cli {

struct OffCpuSetup {
  size_t switch_event = SIZE_MAX;  // the context-switches event; SIZE_MAX: fallback
  std::string fallback_reason;     // why the fallback is used ("" when it is not)
  std::unique_ptr<collect::BpfOffCpu> bpf;  // set: the BPF program records the spans
};

// Loads the BPF recorder for `pids` when it should be used (see above) and says on stderr
// which recorder records the spans. False and `error` when TALLY_OFF_CPU_BACKEND names no
// backend.
bool open_off_cpu_bpf(const collect::SamplerConfig& config, OffCpuSetup& setup, std::string& error);

// Checks the events for --off-cpu (the first must count time) and adds the switch-out
// event, unless TALLY_OFF_CPU_FALLBACK=1 asks for the fallback or setup.bpf records. False and `error` for
// events that cannot give wall time.
bool add_off_cpu_events(collect::SamplerConfig& config, OffCpuSetup& setup, std::string& error);

// When the switch-out event was refused, or opened without the kernel (so it would never
// fire), says so on stderr and opens the fallback instead.
core::Expected<std::unique_ptr<collect::Sampler>> off_cpu_fallback_if_needed(
    collect::SamplerConfig& config, OffCpuSetup& setup,
    core::Expected<std::unique_ptr<collect::Sampler>> opened);

// The lines tally record adds to its summary: how off-CPU time was recorded.
void append_off_cpu_summary(std::vector<std::string>& lines, const OffCpuSetup& setup,
                            const collect::ProfileBuilderStats& built,
                            const collect::SamplerStats& sampled, collect::CallGraphMode mode);

}  // namespace tally::cli
