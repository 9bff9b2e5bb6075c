// perf_event_open(2): building perf_event_attr for sampling and for counting, and opening
// events with error messages that say what to change (perf_event_paranoid, CAP_PERFMON,
// an event this machine's PMU does not have).
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "collect/event_spec.h"
#include "core/error.h"

namespace tally::collect {

enum class CallGraphMode { none, fp, dwarf };

struct SamplingOptions {
  uint64_t frequency = 999;  // samples per second (attr.freq), used when period == 0
  uint64_t period = 0;       // -c PERIOD: a fixed sample period instead of a frequency
  CallGraphMode call_graph = CallGraphMode::dwarf;
  uint32_t stack_bytes = 16384;  // -g dwarf,SIZE: user stack copied per sample (multiple of 8)
  bool inherit = false;          // counters follow new threads and child processes
  bool enable_on_exec = false;   // start counting when the command execs (tally record -- CMD)
  bool with_mmap_records = true; // the leader of each ring asks for MMAP2/COMM/FORK/EXIT
  uint32_t wakeup_bytes = 64 * 1024;  // wake the reader when this much is in the ring buffer
  bool exclude_idle = false;     // no samples while a CPU is idle (tally daemon, system-wide)
};

// Sample records carry: IP, TID, TIME, CPU, PERIOD, IDENTIFIER (which event), plus
// CALLCHAIN for fp and REGS_USER + STACK_USER (+ CALLCHAIN for kernel frames) for dwarf.
// sample_id_all is set, so side-band records (MMAP2, COMM, FORK, EXIT) carry TID, TIME, CPU
// and IDENTIFIER too. The event starts disabled: the caller enables it
// (ioctl PERF_EVENT_IOC_ENABLE), or the exec does when `enable_on_exec`.
perf_event_attr sampling_attr(const EventSpec& event, const SamplingOptions& options);

// Counting (tally stat): read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING, disabled
// until enabled by the caller (or on exec when `enable_on_exec`).
perf_event_attr counting_attr(const EventSpec& event, bool inherit, bool enable_on_exec);

// An owned perf event file descriptor.
class PerfEventFd {
 public:
  PerfEventFd() = default;
  explicit PerfEventFd(int fd) : fd_(fd) {}
  ~PerfEventFd();
  PerfEventFd(PerfEventFd&& other) noexcept : fd_(other.release()) {}
  PerfEventFd& operator=(PerfEventFd&& other) noexcept;
  int get() const { return fd_; }
  int release() { int fd = fd_; fd_ = -1; return fd; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC). On failure the error
// names the event and the cause: "event 'cycles' is not supported on this machine" (ENOENT,
// EOPNOTSUPP, ENODEV, EINVAL on a PMU event), "... not permitted: kernel.perf_event_paranoid
// is 2 (/proc/sys/kernel/perf_event_paranoid); set it to 1 or lower, or run with
// CAP_PERFMON" (EACCES, EPERM), "process N does not exist" (ESRCH), and so on.
// ErrorKind::unsupported for the first two kinds, io otherwise.
core::Expected<PerfEventFd> open_event(const perf_event_attr& attr, const EventSpec& event,
                                       pid_t pid, int cpu, int group_fd = -1);

}  // namespace tally::collect
