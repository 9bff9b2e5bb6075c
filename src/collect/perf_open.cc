#include "collect/perf_open.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "collect/user_regs.h"

namespace tally::collect {
namespace {

using core::Error;
using core::ErrorKind;
using core::Expected;

perf_event_attr base_attr(const EventSpec& event) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = event.type;
  attr.config = event.config;
  attr.exclude_user = event.exclude_user ? 1 : 0;
  attr.exclude_kernel = event.exclude_kernel ? 1 : 0;
  attr.disabled = 1;
  return attr;
}

std::optional<int> read_paranoid() {
  std::ifstream file("/proc/sys/kernel/perf_event_paranoid");
  int value = 0;
  if (file >> value) return value;
  return std::nullopt;
}

bool cpu_online(int cpu) {
  if (cpu == 0) return true;  // cpu0 has no "online" file on most machines: it cannot go offline
  std::ifstream file(fmt::format("/sys/devices/system/cpu/cpu{}/online", cpu));
  int online = 0;
  return file >> online && online == 1;
}

// The highest perf_event_paranoid that still allows this open without CAP_PERFMON
// (Documentation/admin-guide/perf-security.rst): 2 for a process's user-space events,
// 1 to include the kernel, 0 for CPU-wide events, -1 for raw tracepoints and such.
int paranoid_needed(const perf_event_attr& attr, pid_t pid) {
  if (pid == -1) return 0;
  if (!attr.exclude_kernel) return 1;
  return 2;
}

Error permission_error(const perf_event_attr& attr, const EventSpec& event, pid_t pid) {
  auto paranoid = read_paranoid();
  int needed = paranoid_needed(attr, pid);
  std::string what = pid == -1 ? "counting CPU-wide" : "counting a process";
  if (!attr.exclude_kernel && pid != -1) what += " in the kernel";
  if (!paranoid)
    return Error{fmt::format("event '{}': {} is not permitted (kernel.perf_event_paranoid could "
                             "not be read); run with CAP_PERFMON or as root",
                             event.text.empty() ? event.name : event.text, what),
                 ErrorKind::unsupported};
  if (*paranoid <= needed && geteuid() == 0)
    return Error{fmt::format("event '{}': {} is denied even to root although "
                             "kernel.perf_event_paranoid is {} (a container's seccomp policy or "
                             "kernel lockdown?)",
                             event.text.empty() ? event.name : event.text, what, *paranoid),
                 ErrorKind::unsupported};
  std::string hint;
  if (pid != -1 && !attr.exclude_kernel && *paranoid == 2)
    hint = fmt::format(", or count user space only ('{}:u')", event.name);
  return Error{fmt::format("event '{}': {} is not permitted: kernel.perf_event_paranoid is {} "
                           "(/proc/sys/kernel/perf_event_paranoid); set it to {} or lower "
                           "(sysctl kernel.perf_event_paranoid={}), or run with CAP_PERFMON{}",
                           event.text.empty() ? event.name : event.text, what, *paranoid, needed,
                           needed, hint),
               ErrorKind::unsupported};
}

Error open_error(int error, const perf_event_attr& attr, const EventSpec& event, pid_t pid,
                 int cpu) {
  const std::string shown = event.text.empty() ? event.name : event.text;
  if (cpu >= 0 && (error == ENODEV || error == EINVAL) && !cpu_online(cpu))
    return Error{fmt::format("event '{}': CPU {} is not online", shown, cpu), ErrorKind::io};
  const bool unsupported = error == ENOENT || error == EOPNOTSUPP || error == ENODEV ||
                           (error == EINVAL && event.needs_pmu());
  if (unsupported) {
    std::string why = event.needs_pmu()
                          ? " (no hardware performance counter for it: on a virtual machine the "
                            "PMU is often not passed through; software events such as cpu-clock "
                            "and task-clock work everywhere)"
                          : "";
    return Error{fmt::format("event '{}' is not supported on this machine{}", shown, why),
                 ErrorKind::unsupported};
  }
  switch (error) {
    case EACCES:
    case EPERM: return permission_error(attr, event, pid);
    case ESRCH:
      return Error{fmt::format("event '{}': process {} does not exist", shown, pid),
                   ErrorKind::io};
    case EMFILE:
    case ENFILE:
      return Error{fmt::format("event '{}': too many open files (one per event and CPU): raise "
                               "the limit with ulimit -n",
                               shown),
                   ErrorKind::io};
    case EBUSY:
      return Error{fmt::format("event '{}': the performance counters are in use by another "
                               "program",
                               shown),
                   ErrorKind::io};
    case EINVAL:
      return Error{fmt::format("event '{}': the kernel refused its settings (EINVAL: type {}, "
                               "config {:#x})",
                               shown, attr.type, attr.config),
                   ErrorKind::io};
    default: break;
  }
  return Error{fmt::format("event '{}': perf_event_open failed: {}", shown, std::strerror(error)),
               ErrorKind::io};
}

}  // namespace

perf_event_attr sampling_attr(const EventSpec& event, const SamplingOptions& options) {
  perf_event_attr attr = base_attr(event);
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;
  switch (options.call_graph) {
    case CallGraphMode::none: break;
    case CallGraphMode::fp: attr.sample_type |= PERF_SAMPLE_CALLCHAIN; break;
    case CallGraphMode::dwarf:
      // The kernel's callchain for kernel frames only; user frames come from unwinding the
      // copied stack.
      attr.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
      attr.exclude_callchain_user = 1;
      attr.sample_regs_user = kSampledUserRegs;
      attr.sample_stack_user = options.stack_bytes;
      break;
  }
  if (options.period != 0) {
    attr.sample_period = options.period;
  } else {
    attr.freq = 1;
    attr.sample_freq = options.frequency;
  }
  attr.inherit = options.inherit ? 1 : 0;
  attr.enable_on_exec = options.enable_on_exec ? 1 : 0;
  attr.exclude_idle = options.exclude_idle ? 1 : 0;
  if (options.with_mmap_records) {
    attr.mmap = 1;
    attr.mmap2 = 1;
    attr.comm = 1;
    attr.comm_exec = 1;
    attr.task = 1;
    // No attr.build_id: while any event with it is open, the kernel (5.12 to at least 6.18)
    // leaves PERF_RECORD_MISC_MMAP_BUILD_ID set on the MMAP2 records it then writes for
    // other events, whose bodies hold device and inode: perf 6.1 reads the device major as
    // a build id size and overflows its 20-byte buffer. Build ids come from the mapped
    // files instead (collect/file_build_ids.h).
  }
  attr.sample_id_all = 1;
  attr.watermark = 1;
  attr.wakeup_watermark = options.wakeup_bytes;
  return attr;
}

perf_event_attr counting_attr(const EventSpec& event, bool inherit, bool enable_on_exec) {
  perf_event_attr attr = base_attr(event);
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  attr.inherit = inherit ? 1 : 0;
  attr.enable_on_exec = enable_on_exec ? 1 : 0;
  return attr;
}

PerfEventFd::~PerfEventFd() {
  if (fd_ >= 0) ::close(fd_);
}

PerfEventFd& PerfEventFd::operator=(PerfEventFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Expected<PerfEventFd> open_event(const perf_event_attr& attr, const EventSpec& event, pid_t pid,
                                 int cpu, int group_fd) {
  auto call = [&](const perf_event_attr& a) {
    return static_cast<int>(
        ::syscall(SYS_perf_event_open, &a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC));
  };
  int fd = call(attr);
  if (fd < 0) return open_error(errno, attr, event, pid, cpu);
  return PerfEventFd(fd);
}

}  // namespace tally::collect
