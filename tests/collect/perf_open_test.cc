// sampling_attr / counting_attr field by field, and open_event against the running kernel:
// software events open; a hardware event either opens (a machine with a PMU) or fails with
// "event 'cycles' is not supported on this machine".
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <string>

#include "collect/perf_open.h"
#include "collect/user_regs.h"
#include "support/privileges.h"
#include "support/test_support.h"

namespace tally::collect {
namespace {

EventSpec event(const char* text) {
  auto spec = parse_event(text, CpuVendor::amd);
  EXPECT_TRUE(spec) << text;
  return *spec;
}

constexpr uint64_t kBaseSample = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;

TEST(SamplingAttr, FramePointerCallGraphAtAFrequency) {
  SamplingOptions options;
  options.call_graph = CallGraphMode::fp;
  options.frequency = 499;
  options.inherit = true;
  options.enable_on_exec = true;
  perf_event_attr attr = sampling_attr(event("cycles:u"), options);
  EXPECT_EQ(attr.size, sizeof(perf_event_attr));
  EXPECT_EQ(attr.type, PERF_TYPE_HARDWARE);
  EXPECT_EQ(attr.config, PERF_COUNT_HW_CPU_CYCLES);
  EXPECT_EQ(attr.sample_type, kBaseSample | PERF_SAMPLE_CALLCHAIN);
  EXPECT_EQ(attr.freq, 1u);
  EXPECT_EQ(attr.sample_freq, 499u);
  EXPECT_EQ(attr.exclude_kernel, 1u);
  EXPECT_EQ(attr.exclude_user, 0u);
  EXPECT_EQ(attr.inherit, 1u);
  EXPECT_EQ(attr.enable_on_exec, 1u);
  EXPECT_EQ(attr.disabled, 1u);
  EXPECT_EQ(attr.mmap2, 1u);
  EXPECT_EQ(attr.comm, 1u);
  EXPECT_EQ(attr.task, 1u);
  // Never asked: the kernel would flag other tools' MMAP2 records as holding build ids.
  EXPECT_EQ(attr.build_id, 0u);
  EXPECT_EQ(attr.sample_id_all, 1u);
  EXPECT_EQ(attr.watermark, 1u);
  EXPECT_EQ(attr.wakeup_watermark, options.wakeup_bytes);
  EXPECT_EQ(attr.sample_regs_user, 0u);
  EXPECT_EQ(attr.sample_stack_user, 0u);
  EXPECT_EQ(attr.exclude_callchain_user, 0u);
}

TEST(SamplingAttr, DwarfCopiesRegistersAndStackWithAPeriod) {
  SamplingOptions options;
  options.call_graph = CallGraphMode::dwarf;
  options.period = 100000;
  options.stack_bytes = 8192;
  options.with_mmap_records = false;
  perf_event_attr attr = sampling_attr(event("task-clock"), options);
  EXPECT_EQ(attr.type, PERF_TYPE_SOFTWARE);
  EXPECT_EQ(attr.config, PERF_COUNT_SW_TASK_CLOCK);
  EXPECT_EQ(attr.sample_type, kBaseSample | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                                  PERF_SAMPLE_STACK_USER);
  EXPECT_EQ(attr.exclude_callchain_user, 1u);
  EXPECT_EQ(attr.sample_regs_user, kSampledUserRegs);
  EXPECT_EQ(attr.sample_stack_user, 8192u);
  EXPECT_EQ(attr.freq, 0u);
  EXPECT_EQ(attr.sample_period, 100000u);
  EXPECT_EQ(attr.inherit, 0u);
  EXPECT_EQ(attr.enable_on_exec, 0u);
  EXPECT_EQ(attr.mmap2, 0u);
  EXPECT_EQ(attr.comm, 0u);
  EXPECT_EQ(attr.build_id, 0u);
  EXPECT_EQ(attr.sample_id_all, 1u);
  // Registers the unwinder needs are in the mask; segment registers are not.
  EXPECT_NE(kSampledUserRegs & (1ULL << PERF_REG_X86_IP), 0u);
  EXPECT_NE(kSampledUserRegs & (1ULL << PERF_REG_X86_SP), 0u);
  EXPECT_NE(kSampledUserRegs & (1ULL << PERF_REG_X86_BP), 0u);
  EXPECT_EQ(kSampledUserRegs & (1ULL << PERF_REG_X86_FS), 0u);
}

TEST(SamplingAttr, NoCallGraph) {
  SamplingOptions options;
  options.call_graph = CallGraphMode::none;
  EXPECT_EQ(sampling_attr(event("cpu-clock"), options).sample_type, kBaseSample);
}

TEST(CountingAttr, ReadsEnabledAndRunningTimes) {
  perf_event_attr attr = counting_attr(event("page-faults:k"), true, false);
  EXPECT_EQ(attr.type, PERF_TYPE_SOFTWARE);
  EXPECT_EQ(attr.config, PERF_COUNT_SW_PAGE_FAULTS);
  EXPECT_EQ(attr.read_format, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
  EXPECT_EQ(attr.exclude_user, 1u);
  EXPECT_EQ(attr.exclude_kernel, 0u);
  EXPECT_EQ(attr.inherit, 1u);
  EXPECT_EQ(attr.enable_on_exec, 0u);
  EXPECT_EQ(attr.disabled, 1u);
  EXPECT_EQ(attr.sample_type, 0u);
  EXPECT_EQ(attr.sample_period, 0u);
  EXPECT_EQ(counting_attr(event("task-clock"), false, true).enable_on_exec, 1u);
}

TEST(OpenEvent, ASoftwareEventOpensAndCounts) {
  EventSpec clock = event("task-clock");
  auto fd = open_event(counting_attr(clock, false, false), clock, 0, -1);
  ASSERT_TRUE(fd) << fd.error().message;
  ASSERT_EQ(ioctl(fd->get(), PERF_EVENT_IOC_ENABLE, 0), 0);
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 2000000; ++i) sink = sink + i;
  struct {
    uint64_t value, enabled, running;
  } reading{};
  ASSERT_EQ(read(fd->get(), &reading, sizeof(reading)), static_cast<ssize_t>(sizeof(reading)));
  EXPECT_GT(reading.value, 0u);
  EXPECT_GT(reading.enabled, 0u);
  EXPECT_EQ(reading.running, reading.enabled);  // a software event is never multiplexed
}

TEST(OpenEvent, SamplingAttrIsAcceptedByTheKernel) {
  SamplingOptions options;
  options.call_graph = CallGraphMode::dwarf;
  EventSpec clock = event("cpu-clock");
  auto fd = open_event(sampling_attr(clock, options), clock, 0, -1);
  ASSERT_TRUE(fd) << fd.error().message;
  PerfEventFd moved = std::move(*fd);
  EXPECT_TRUE(moved);
  EXPECT_FALSE(*fd);
}

// Whether this machine has a hardware PMU: the raw syscall, not tally's wrapper.
bool machine_has_cycles() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.exclude_kernel = 1;
  attr.disabled = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) close(static_cast<int>(fd));
  return fd >= 0;
}

TEST(OpenEvent, HardwareEventOpensOrSaysNotSupported) {
  for (const char* text : {"cycles", "instructions:u", "LLC-load-misses", "r76"}) {
    EventSpec spec = event(text);
    auto fd = open_event(counting_attr(spec, false, false), spec, 0, -1);
    if (machine_has_cycles() && fd) continue;  // a machine with a PMU
    ASSERT_FALSE(fd) << text << " opened although cycles cannot be";
    EXPECT_EQ(fd.error().kind, core::ErrorKind::unsupported) << fd.error().message;
    EXPECT_NE(fd.error().message.find(std::string("event '") + text +
                                      "' is not supported on this machine"),
              std::string::npos)
        << fd.error().message;
  }
}

// CPU-wide counting as an unprivileged user: refused above perf_event_paranoid 0, with
// the setting's value and what to change. Run in a child that drops root and every
// capability; where the setting lets anyone count CPU-wide (<= 0), root raises it to 1
// for the test.
TEST(OpenEvent, PermissionErrorNamesParanoidAndCapPerfmon) {
  test::ParanoidAtLeast strict(1);
  if (!strict.problem().empty()) TALLY_SKIP_OR_FAIL_IN_CI(strict.problem());
  const int paranoid = test::perf_event_paranoid();
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    std::string message = test::drop_to_nobody();
    if (!message.empty()) {
      message = "cannot drop privileges: " + message;
      if (write(pipe_fds[1], message.data(), message.size()) < 0) _exit(3);
      _exit(2);
    }
    EventSpec clock = event("task-clock");
    auto fd = open_event(counting_attr(clock, false, false), clock, -1, 0);
    message = fd ? "opened" : fd.error().message;
    if (write(pipe_fds[1], message.data(), message.size()) < 0) _exit(3);
    _exit(fd ? 1 : 0);
  }
  close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t got; (got = read(pipe_fds[0], buffer, sizeof(buffer))) > 0;)
    message.append(buffer, static_cast<size_t>(got));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << message;
  EXPECT_NE(message.find("event 'task-clock': counting CPU-wide is not permitted: "
                         "kernel.perf_event_paranoid is " +
                         std::to_string(paranoid)),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("set it to 0 or lower"), std::string::npos) << message;
  EXPECT_NE(message.find("CAP_PERFMON"), std::string::npos) << message;
}

TEST(OpenEvent, MissingProcessIsNamed) {
  EventSpec clock = event("task-clock");
  // pid_max is at most 2^22: this pid cannot exist.
  auto fd = open_event(counting_attr(clock, false, false), clock, 1 << 30, -1);
  ASSERT_FALSE(fd);
  EXPECT_NE(fd.error().message.find("process 1073741824 does not exist"), std::string::npos)
      << fd.error().message;
}

TEST(OpenEvent, OfflineCpuIsNamed) {
  EventSpec clock = event("cpu-clock");
  const int cpu = 4095;  // beyond any CPU of the test machines
  auto fd = open_event(counting_attr(clock, false, false), clock, -1, cpu);
  ASSERT_FALSE(fd);
  EXPECT_NE(fd.error().message.find("CPU 4095 is not online"), std::string::npos)
      << fd.error().message;
}

}  // namespace
}  // namespace tally::collect
