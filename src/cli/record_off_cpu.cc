#include "cli/record_off_cpu.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "collect/cpu_topology.h"
#include "collect/event_spec.h"

namespace tally::cli {

namespace {

bool fallback_forced() {
  const char* value = std::getenv("TALLY_OFF_CPU_FALLBACK");
  return value != nullptr && std::string_view(value) == "1";
}

void use_fallback(collect::SamplerConfig& config, OffCpuSetup& setup, std::string reason) {
  if (setup.switch_event != SIZE_MAX) {
    config.events.erase(config.events.begin() + static_cast<std::ptrdiff_t>(setup.switch_event));
    if (setup.switch_event < config.periods.size())
      config.periods.erase(config.periods.begin() + static_cast<std::ptrdiff_t>(setup.switch_event));
  }
  setup.switch_event = SIZE_MAX;
  setup.fallback_reason = std::move(reason);
  config.context_switch_event = 0;
  std::fprintf(stderr,
               "tally: note: off-CPU stacks are not recorded: %s; off-CPU time comes from "
               "context-switch records alone (PERF_RECORD_SWITCH), per thread, preempted apart "
               "from blocked, without stacks or the kind of wait\n",
               setup.fallback_reason.c_str());
}

}  // namespace

bool open_off_cpu_bpf(const collect::SamplerConfig& config, OffCpuSetup& setup, std::string& error) {
  const char* env = std::getenv("TALLY_OFF_CPU_BACKEND");
  const std::string_view asked = env != nullptr ? env : "";
  if (!asked.empty() && asked != "perf" && asked != "bpf") {
    error = fmt::format("TALLY_OFF_CPU_BACKEND is perf or bpf, not '{}'", asked);
    return false;
  }
  std::string why_not;
  if (asked == "perf") why_not = "TALLY_OFF_CPU_BACKEND=perf";
  else if (fallback_forced()) why_not = "TALLY_OFF_CPU_FALLBACK=1";
  else if (config.target != collect::TargetKind::command) why_not = "used for -- COMMAND only";
  else if (asked != "bpf" && config.sampling.call_graph != collect::CallGraphMode::fp)
    why_not = "used with -g fp (its user stacks follow frame pointers)";
  if (why_not.empty()) {
    auto opened = collect::BpfOffCpu::open(config.pids, /*from_exec=*/true);
    if (opened) {
      setup.bpf = std::move(*opened);
      std::fprintf(stderr, "tally: off-CPU: recorded by a BPF program at sched_switch\n");
      return true;
    }
    why_not = opened.error().message;
  }
  std::fprintf(stderr, "tally: off-CPU: recorded with perf_event_open (BPF not used: %s)\n",
               why_not.c_str());
  return true;
}

bool add_off_cpu_events(collect::SamplerConfig& config, OffCpuSetup& setup, std::string& error) {
  if (!config.events.front().counts_time()) {
    error = fmt::format("--off-cpu adds off-CPU time to on-CPU time: the first event must be "
                        "cpu-clock or task-clock, not '{}'",
                        config.events.front().text);
    return false;
  }
  if (config.sampling.period != 0) {
    error = "--off-cpu samples on-CPU time by frequency (-F): -c does not apply";
    return false;
  }
  if (setup.bpf) return true;
  if (fallback_forced()) {
    use_fallback(config, setup, "TALLY_OFF_CPU_FALLBACK=1 asks for the fallback");
    return true;
  }
  auto event = collect::parse_event("context-switches");
  if (!event) {
    error = event.error().message;
    return false;
  }
  setup.switch_event = config.events.size();
  config.events.push_back(*event);
  config.periods.resize(config.events.size(), 0);
  config.periods[setup.switch_event] = 1;  // every switch
  // A switch-out copies as much user stack as a CPU sample (-g dwarf,SIZE sets both): a
  // blocked thread's stack is no shallower. 8 KiB cut 3631 of sqlite3's 3636 waits in
  // fdatasync (its frames take 8-16 KiB). -g fp, or a smaller SIZE, keeps up with more
  // switches a second.
  config.context_switch_event = static_cast<int>(setup.switch_event);
  // A sample and two records per switch: a busy program switches 100k+ times a second,
  // which fills the default rings between two reads. 8 MiB per CPU; with -g dwarf, where
  // each switch-out carries 16 KiB, up to 32 MiB per CPU within 256 MiB in all: sqlite3's
  // commits (8.5k switch-outs a second) lost 69-860 records of ~7000 to 8 MiB rings while
  // the first samples' files were being read, and none to 32 MiB.
  if (config.ring_pages == 0) {
    config.ring_pages = 2048;
    if (config.sampling.call_graph == collect::CallGraphMode::dwarf) {
      const size_t cpus = std::max<size_t>(collect::online_cpus().size(), 1);
      while (config.ring_pages < 8192 && config.ring_pages * 2 * cpus <= 65536) config.ring_pages *= 2;
    }
  }
  return true;
}

core::Expected<std::unique_ptr<collect::Sampler>> off_cpu_fallback_if_needed(
    collect::SamplerConfig& config, OffCpuSetup& setup,
    core::Expected<std::unique_ptr<collect::Sampler>> opened) {
  if (setup.switch_event == SIZE_MAX) return opened;
  std::string reason;
  if (!opened) {
    if (opened.error().kind != core::ErrorKind::unsupported) return opened;
    reason = "the kernel refused the context-switches event: " + opened.error().message;
  } else if ((*opened)->attr(setup.switch_event).exclude_kernel) {
    reason = "the kernel refuses to sample its own part (see the note on kernel frames), and a "
             "switch-out happens in the kernel";
  } else {
    return opened;
  }
  // The refused sampler's counters close before the fallback's open.
  opened = core::Error{"", core::ErrorKind::io};
  use_fallback(config, setup, reason);
  return collect::Sampler::open(config);
}

void append_off_cpu_summary(std::vector<std::string>& lines, const OffCpuSetup& setup,
                            const collect::ProfileBuilderStats& built,
                            const collect::SamplerStats& sampled, collect::CallGraphMode mode) {
  if (setup.bpf) {
    lines.push_back(fmt::format("off-CPU: {} spans from a BPF program at sched_switch (stacks "
                                "interned in the kernel), lost {} records",
                                built.off_cpu_spans, setup.bpf->lost()));
    if (setup.bpf->unstacked())
      lines.push_back(fmt::format("off-CPU: {} spans had no switch-out stack", setup.bpf->unstacked()));
    if (setup.bpf->without_user_stack())
      lines.push_back(fmt::format("off-CPU: {} spans have kernel frames only (the BPF stack map was "
                                  "full or two stacks shared a bucket)",
                                  setup.bpf->without_user_stack()));
    if (setup.bpf->leaving_for_user())
      lines.push_back(fmt::format("off-CPU: {} spans were preempted on their way back to user space: "
                                  "user frames only (the kernel's were its exit path)",
                                  setup.bpf->leaving_for_user()));
    return;
  }
  std::string how = setup.switch_event != SIZE_MAX
                        ? "a context-switches sample with stack at every switch-out, "
                          "PERF_RECORD_SWITCH for the switch-ins"
                        : "PERF_RECORD_SWITCH records alone, without stacks (" +
                              setup.fallback_reason + ")";
  lines.push_back(fmt::format("off-CPU: {} spans from {}", built.off_cpu_spans, how));
  if (setup.switch_event != SIZE_MAX && built.off_cpu_unstacked > built.off_cpu_edge)
    lines.push_back(fmt::format("off-CPU: {} spans had no switch-out stack",
                                built.off_cpu_unstacked - built.off_cpu_edge));
  if (sampled.lost && mode == collect::CallGraphMode::dwarf && setup.switch_event != SIZE_MAX)
    lines.push_back("off-CPU: records were lost: every switch-out copies the user stack with -g "
                    "dwarf; -g fp (frame pointers) keeps up with many more switches a second");
  if (built.off_cpu_edge)
    lines.push_back(fmt::format("off-CPU: {} spans began before the recording or outlasted it "
                                "(counted within the recording, label off_cpu_span)",
                                built.off_cpu_edge));
}

}  // namespace tally::cli
