#include "daemon/push_interval.h"

#include <fmt/format.h>

#include <algorithm>

#include "daemon/service_name.h"
#include "store/image_profile.h"

namespace tally::daemon {

uint32_t PushInterval::service_index(pid_t pid) {
  if (auto it = service_of_pid_.find(pid); it != service_of_pid_.end()) return it->second.service;
  // Kernel threads and the idle task (pid 0) are the kernel's; /proc is read once per
  // process.
  bool from_cgroup = false;
  std::string name = !fixed_service_.empty() ? fixed_service_
                     : pid <= 0              ? std::string("kernel")
                                             : service_of_process(pid, &from_cgroup);
  const uint32_t service = add_service(name);
  service_of_pid_[pid] = {service, from_cgroup};
  return service;
}

uint32_t PushInterval::add_service(const std::string& name) {
  auto [it, added] = service_ids_.try_emplace(name, static_cast<uint32_t>(services_.size()));
  if (added) {
    services_.push_back(name);
    stacks_.emplace_back();
  }
  return it->second;
}

void PushInterval::note_fork(pid_t parent, pid_t child) {
  if (!fixed_service_.empty()) return;
  auto known = service_of_pid_.find(parent);
  if (known == service_of_pid_.end()) return;  // looked up when the child is first seen
  service_of_pid_[child] = known->second;
}

void PushInterval::note_exec(pid_t pid, std::string_view comm) {
  if (!fixed_service_.empty()) return;
  // A cgroup read costs several times a readlink, and a build runs processes by the
  // thousand: the cgroup is read only for a process not known before.
  bool from_cgroup = false;
  std::string name;
  if (auto it = service_of_pid_.find(pid); it != service_of_pid_.end()) {
    if (it->second.from_cgroup) return;
    name = service_of_executable(pid);
  } else {
    name = service_of_process(pid, &from_cgroup);
  }
  if (name == "unknown" && !comm.empty()) name = std::string(comm);
  service_of_pid_[pid] = {add_service(name), from_cgroup};
}

void PushInterval::add(pid_t pid, size_t event, std::span<const store::Frame> frames,
                       uint64_t period) {
  if (frames.empty()) return;
  const uint32_t service = service_index(pid);
  key_.clear();
  for (const store::Frame& f : frames) key_.push_back(uint64_t(f.image) << 32 | f.offset);
  Counts& counts = stacks_[service][key_];
  if (counts.samples.size() <= event) {
    counts.samples.resize(event + 1, 0);
    counts.periods.resize(event + 1, 0);
  }
  ++counts.samples[event];
  counts.periods[event] += period;
  ++samples_;
}

std::vector<PushInterval::ServiceProfile> PushInterval::take(const store::Aggregate& aggregate,
                                                            int64_t start_ns, int64_t duration_ns) {
  std::vector<ServiceProfile> out;
  for (size_t s = 0; s < services_.size(); ++s) {
    for (size_t e = 0; e < aggregate.events().size(); ++e) {
      const store::EventInfo& event = aggregate.events()[e];
      ServiceProfile result{services_[s], e, 0, {}, {}};
      core::Profile& p = result.profile;
      p.sample_types = {p.value_type("samples", "count"), p.value_type(event.name, event.unit)};
      p.period_type = p.value_type(event.name, event.unit);
      p.time_nanos = start_ns;
      p.duration_nanos = duration_ns;
      store::ImageProfileBuilder builder(p);
      std::vector<core::LocationId> stack;
      uint64_t period_sum = 0;
      for (const auto& [frames, counts] : stacks_[s]) {
        if (counts.samples.size() <= e || counts.samples[e] == 0) continue;
        stack.clear();
        for (uint64_t frame : frames) {
          const store::Aggregate::Image& image = aggregate.image_data(uint32_t(frame >> 32));
          stack.push_back(builder.location(image.entry.id, image.entry.key.path,
                                           image.entry.key.build_id, uint32_t(frame)));
        }
        const int64_t values[2] = {int64_t(counts.samples[e]), int64_t(counts.periods[e])};
        builder.add(stack, values);
        result.samples += counts.samples[e];
        period_sum += counts.periods[e];
      }
      if (result.samples == 0) continue;
      p.period = int64_t(period_sum / result.samples);  // the mean period
      p.comments.push_back(p.intern(fmt::format("tally daemon, service {}", services_[s])));
      for (core::MappingId m = 1; m <= p.mappings.size(); ++m)
        result.mapping_images.push_back(builder.image_of(m));
      out.push_back(std::move(result));
    }
  }
  // Services sorted by name: the pushes' order does not depend on hash order.
  std::sort(out.begin(), out.end(), [](const ServiceProfile& a, const ServiceProfile& b) {
    return a.service != b.service ? a.service < b.service : a.event < b.event;
  });
  for (Stacks& stacks : stacks_) stacks.clear();
  samples_ = 0;
  return out;
}

}  // namespace tally::daemon
