// Turns parsed `perf script` samples into a core::Profile: events become sample types (in
// order of first appearance, so samples are kept until the end, when all events are
// known), frames become locations with their inline chains, DSOs become mappings, and
// identical samples are merged in order of first appearance.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/profile.h"
#include "formats/perfscript/perf_script_lines.h"

namespace tally::perfscript {

// One frame line of a sample, with the source line -F +srcline printed after it.
struct Frame {
  FrameLine line;
  std::string_view file;
  int64_t source_line = 0;
};

class ProfileBuilder {
 public:
  ProfileBuilder();

  // Frames leaf first. The header's event must be non-empty (the reader names a missing one).
  void add_sample(const SampleHeader& header, std::span<const Frame> frames);
  // A "# key : value" line of perf's header, kept as attribute "perf.key".
  void add_header_field(std::string_view key, std::string_view value);
  void set_captured_on(int64_t time_nanos) { captured_on_ = time_nanos; }

  size_t sample_count() const { return samples_.size(); }
  core::Profile finish();

 private:
  struct Event {
    std::string name;
    bool has_period = false;
    bool one_period = true;  // every sample of the event has the same period
    int64_t period = 0;
  };
  struct PendingSample {
    uint32_t event = 0;
    int64_t value = 0;
    size_t stack_begin = 0;
    size_t stack_size = 0;
    size_t labels_begin = 0;
    size_t labels_size = 0;
  };

  uint32_t event_index(const SampleHeader& header);
  void add_labels(const SampleHeader& header);
  void add_stack(std::span<const Frame> frames);
  core::LocationId location(std::span<const Frame> chain, bool has_real_frame);
  core::MappingId mapping(std::string_view dso);
  core::FunctionId function(std::string_view symbol, std::string_view file);
  void put_main_binary_first();

  core::Profile profile_;
  std::vector<Event> events_;
  std::unordered_map<std::string, uint32_t> event_ids_;
  std::unordered_map<std::string, core::MappingId> mapping_ids_;
  std::unordered_map<std::string, core::LocationId> location_ids_;
  std::unordered_map<std::string, core::FunctionId> function_ids_;
  std::string key_;  // reused for lookups

  std::vector<PendingSample> samples_;
  std::vector<core::LocationId> stack_pool_;
  std::vector<core::Label> label_pool_;
  int64_t first_time_ = 0;
  int64_t last_time_ = 0;
  int64_t captured_on_ = 0;
  std::string first_comm_;  // the command of the first sample
};

}  // namespace tally::perfscript
