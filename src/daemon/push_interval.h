// What the daemon pushes: the samples of one interval (--push-every), per service and
// event, as the collector attributed them (store::Frame: image and offset). take() turns
// them into symbolized profiles, one per service and event, laid out as the database's
// queries lay images out (store/image_profile.h), so a pushed profile and `tally top --db`
// of the same interval hold the same numbers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/profile.h"
#include "store/aggregate.h"

namespace tally::daemon {

class PushInterval {
 public:
  // `fixed_service`: every sample's service (--service); "" to name each process's own
  // (service_of_process).
  explicit PushInterval(std::string fixed_service) : fixed_service_(std::move(fixed_service)) {}

  // One sample of event `event` in process `pid`, frames leaf first.
  void add(pid_t pid, size_t event, std::span<const store::Frame> frames, uint64_t period);
  uint64_t samples() const { return samples_; }
  // Looks the process's service up unless known (the daemon calls it at each mapping the
  // process makes, while it is alive).
  void note_process(pid_t pid) { (void)service_index(pid); }
  // A new process: until it runs exec it is its parent's service (same cgroup, same
  // executable), also when it exits before /proc could be read.
  void note_fork(pid_t parent, pid_t child);
  // The process ran exec: a systemd unit's service stays (exec keeps the cgroup); else its
  // service is looked up now (/proc/PID/exe; the cgroup only when the process was not
  // known), and when it is gone already, named after `comm` (its new executable's name, as
  // the kernel's COMM record gives it) rather than "unknown".
  void note_exec(pid_t pid, std::string_view comm);
  // The process is gone: its service is looked up again when the pid is next seen.
  void forget(pid_t pid) { service_of_pid_.erase(pid); }

  struct ServiceProfile {
    std::string service;
    size_t event = 0;
    uint64_t samples = 0;
    core::Profile profile;  // sample types: samples/count and EVENT/unit
    std::vector<std::string> mapping_images;  // per mapping: its image id
  };
  // The interval's profiles (images and events from `aggregate`), not symbolized yet (see
  // PushSymbolizer: it may run on another thread); the interval starts again empty.
  std::vector<ServiceProfile> take(const store::Aggregate& aggregate, int64_t start_ns,
                                   int64_t duration_ns);

 private:
  uint32_t service_index(pid_t pid);
  uint32_t add_service(const std::string& name);

  struct Counts {
    std::vector<uint64_t> samples, periods;  // per event
  };
  using Stacks = std::unordered_map<std::vector<uint64_t>, Counts, store::Aggregate::StackHash>;

  std::string fixed_service_;
  std::vector<std::string> services_;
  std::unordered_map<std::string, uint32_t> service_ids_;
  struct ProcessService {
    uint32_t service = 0;
    bool from_cgroup = false;  // a systemd unit's, which exec does not change
  };
  std::unordered_map<pid_t, ProcessService> service_of_pid_;  // live processes (forget())
  std::vector<Stacks> stacks_;                          // per service, emptied by take()
  std::vector<uint64_t> key_;
  uint64_t samples_ = 0;
};

}  // namespace tally::daemon
