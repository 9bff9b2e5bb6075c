#include "collect/counter_set.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>

namespace tally::collect {

std::vector<CounterSlot> place_counters(const std::vector<CounterRequest>& requests,
                                        const std::vector<int>& cpus,
                                        const std::vector<NumaNode>& nodes) {
  // The CPU of each node that counts its per-node events.
  std::set<int> node_counting_cpus;
  for (const NumaNode& node : nodes) {
    for (int cpu : node.cpus) {
      if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) {
        node_counting_cpus.insert(cpu);
        break;
      }
    }
  }
  std::vector<int> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  std::vector<CounterSlot> slots;
  for (int cpu : sorted) {
    for (size_t event = 0; event < requests.size(); ++event) {
      if (requests[event].per_node && node_counting_cpus.count(cpu) == 0) continue;
      slots.push_back(CounterSlot{event, cpu});
    }
  }
  return slots;
}

double CounterCounts::running_fraction() const {
  if (enabled_ns == 0) return 0.0;
  return static_cast<double>(running_ns) / static_cast<double>(enabled_ns);
}

CounterIncrease increase_between(const CounterValue& before, const CounterValue& now) {
  // Counters only grow; a smaller value would mean a reset, which tally never does.
  auto minus = [](uint64_t a, uint64_t b) { return a >= b ? a - b : 0; };
  return CounterIncrease{minus(now.value, before.value), minus(now.enabled_ns, before.enabled_ns),
                         minus(now.running_ns, before.running_ns)};
}

core::Expected<CounterSet> CounterSet::open(const std::vector<CounterRequest>& requests,
                                            std::vector<CounterSlot> slots, pid_t pid,
                                            bool enable_on_exec) {
  CounterSet set;
  set.slots_ = std::move(slots);
  // One message per event that fails (not one per CPU): the first error of each event.
  std::vector<std::string> failures(requests.size());
  core::ErrorKind kind = core::ErrorKind::unsupported;
  for (const CounterSlot& slot : set.slots_) {
    const CounterRequest& request = requests.at(slot.event);
    if (!failures[slot.event].empty()) {
      set.fds_.emplace_back();
      continue;
    }
    // inherit: the command's threads and children are counted too (pid mode only).
    perf_event_attr attr = counting_attr(request.event, pid != -1, enable_on_exec && pid != -1);
    auto fd = open_event(attr, request.event, pid, slot.cpu);
    if (!fd) {
      failures[slot.event] =
          fmt::format("event {} ({}): {}", slot.event, request.label, fd.error().message);
      if (fd.error().kind != core::ErrorKind::unsupported) kind = fd.error().kind;
      set.fds_.emplace_back();
      continue;
    }
    set.fds_.push_back(std::move(*fd));
  }
  std::string message;
  for (const std::string& failure : failures) {
    if (failure.empty()) continue;
    if (!message.empty()) message += '\n';
    message += failure;
  }
  if (!message.empty()) return core::Error{message, kind};
  return set;
}

namespace {
core::Status ioctl_all(const std::vector<PerfEventFd>& fds, unsigned long request,
                       const char* what) {
  for (const PerfEventFd& fd : fds) {
    if (ioctl(fd.get(), request, 0) != 0)
      return core::Error{fmt::format("cannot {} a counter: {}", what, std::strerror(errno)),
                         core::ErrorKind::io};
  }
  return core::ok();
}
}  // namespace

core::Status CounterSet::enable() { return ioctl_all(fds_, PERF_EVENT_IOC_ENABLE, "enable"); }
core::Status CounterSet::disable() { return ioctl_all(fds_, PERF_EVENT_IOC_DISABLE, "disable"); }

core::Expected<CounterValue> CounterSet::read(size_t index) const {
  uint64_t words[3] = {};
  ssize_t got = ::read(fds_.at(index).get(), words, sizeof(words));
  if (got != static_cast<ssize_t>(sizeof(words)))
    return core::Error{fmt::format("cannot read the counter of event {} on CPU {}: {}",
                                   slots_.at(index).event, slots_.at(index).cpu,
                                   got < 0 ? std::strerror(errno) : "short read"),
                       core::ErrorKind::io};
  return CounterValue{words[0], words[1], words[2]};
}

}  // namespace tally::collect
