// Merging samples whose stacks and labels are equal. SampleIndex is the hash table of
// distinct samples; SampleMerger adds samples to a profile through it, summing values into
// an equal sample instead of appending a duplicate (readers merge while they read:
// gperftools files repeat stacks after hash-table evictions); Profile::merge_samples
// compacts a profile in place through it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/profile.h"

namespace tally::core {

uint64_t sample_hash(std::span<const LocationId> stack, std::span<const Label> labels);

// Open addressing over sample indices of one profile; equality is checked against the
// profile's own stacks and labels, so the table holds only (hash, index) pairs.
class SampleIndex {
 public:
  explicit SampleIndex(size_t expected);
  // The index of an indexed sample of `p` equal to (stack, labels) with hash `h`.
  std::optional<size_t> find(const Profile& p, uint64_t h, std::span<const LocationId> stack,
                             std::span<const Label> labels) const;
  void insert(uint64_t h, size_t sample);
  // Starts loading the slot where a sample of hash `h` is looked for first (a hint: an
  // insert() in between may move it).
  void prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & (slots_.size() - 1)]); }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    uint32_t sample = kEmpty;
  };
  void place(uint64_t h, uint32_t sample);
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

class SampleMerger {
 public:
  // Indexes the samples `profile` already holds, merging any duplicates among them first;
  // only this merger may add samples to `profile` while it is in use.
  explicit SampleMerger(Profile& profile);

  // Returns the index of the sample that now holds these values.
  size_t add(std::span<const LocationId> stack, std::span<const int64_t> values,
             std::span<const Label> labels = {});
  // The same with the sample's hash, sample_hash(stack, labels), computed by the caller,
  // which may have passed it to prefetch() a while before: the table of a profile with
  // tens of thousands of deep stacks outgrows the caches, and its one miss per sample is
  // then hidden behind the caller's work on the next sample.
  size_t add(uint64_t hash, std::span<const LocationId> stack, std::span<const int64_t> values,
             std::span<const Label> labels = {});
  void prefetch(uint64_t hash) const { index_.prefetch(hash); }

 private:
  Profile& profile_;
  SampleIndex index_;
};

}  // namespace tally::core
