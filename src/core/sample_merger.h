// SampleMerger: adds samples to a profile, summing the values of a sample whose stack and
// labels equal those of one already added instead of appending a duplicate. Readers use it
// to merge while they read (gperftools files repeat stacks after hash-table evictions);
// Profile::merge_identical_samples uses it to merge after the fact.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/profile.h"

namespace tally::core {

class SampleMerger {
 public:
  // Indexes the samples `profile` already holds (which must be distinct); only this
  // merger may add samples to `profile` while it is in use.
  explicit SampleMerger(Profile& profile);

  // Returns the index of the sample that now holds these values.
  size_t add(std::span<const LocationId> stack, std::span<const int64_t> values,
             std::span<const Label> labels = {});

 private:
  uint64_t hash(std::span<const LocationId> stack, std::span<const Label> labels) const;
  bool same(size_t sample, std::span<const LocationId> stack,
            std::span<const Label> labels) const;
  void grow();
  void insert_slot(uint64_t h, uint32_t sample);

  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    uint32_t sample = kEmpty;
  };
  Profile& profile_;
  std::vector<Slot> slots_;
};

}  // namespace tally::core
