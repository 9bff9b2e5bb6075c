#include "daemon/push_payload.h"

#include "formats/pprof/pprof.h"

namespace tally::daemon {

std::string profile_type_name(const core::Profile& profile) {
  for (const core::ValueType& type : profile.sample_types) {
    const std::string_view name = profile.str(type.type);
    const std::string_view unit = profile.str(type.unit);
    if (name == "cpu" || name == "cycles" || name == "cpu-clock" || name == "task-clock" ||
        name == "samples" || unit == "nanoseconds")
      return "process_cpu";
  }
  if (profile.sample_types.empty()) return "unknown";
  const core::StringId chosen = profile.default_sample_type != 0
                                    ? profile.default_sample_type
                                    : profile.sample_types.front().type;
  return std::string(profile.str(chosen));
}

std::vector<Label> series_labels(const std::string& profile_type, const std::string& service,
                                 const std::string& host, const std::vector<Label>& extra) {
  std::vector<Label> labels = {{"__name__", profile_type}, {"service_name", service},
                               {"hostname", host}};
  for (const Label& label : extra) {
    bool replaced = false;
    for (Label& existing : labels)
      if (existing.first == label.first) {
        existing.second = label.second;
        replaced = true;
      }
    if (!replaced) labels.push_back(label);
  }
  return labels;
}

RawSample raw_sample(core::Profile profile) {
  return {pprof::write_profile(std::move(profile)), new_sample_id()};
}

}  // namespace tally::daemon
