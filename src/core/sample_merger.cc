#include "core/sample_merger.h"

#include <algorithm>
#include <stdexcept>

#include "core/checked_math.h"
#include "core/hash.h"

namespace tally::core {

uint64_t sample_hash(std::span<const LocationId> stack, std::span<const Label> labels) {
  uint64_t h = hash_ids(stack);
  for (const Label& l : labels) {
    h = mix64(h ^ (uint64_t(l.key) << 32 | l.str));
    h = mix64(h ^ static_cast<uint64_t>(l.num) ^ (uint64_t(l.num_unit) << 48));
  }
  return h;
}

SampleIndex::SampleIndex(size_t expected) {
  size_t n = 1024;
  while (n * 3 < expected * 4 + 4) n *= 2;
  slots_.resize(n);
}

std::optional<size_t> SampleIndex::find(const Profile& p, uint64_t h,
                                        std::span<const LocationId> stack,
                                        std::span<const Label> labels) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.sample == kEmpty) return std::nullopt;
    if (s.hash != h) continue;
    auto st = p.stack(s.sample);
    auto lb = p.labels(s.sample);
    if (std::equal(st.begin(), st.end(), stack.begin(), stack.end()) &&
        std::equal(lb.begin(), lb.end(), labels.begin(), labels.end()))
      return s.sample;
  }
}

void SampleIndex::place(uint64_t h, uint32_t sample) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (slots_[i].sample == kEmpty) {
      slots_[i] = Slot{h, sample};
      return;
    }
  }
}

void SampleIndex::insert(uint64_t h, size_t sample) {
  if (sample >= kEmpty) throw std::length_error("too many distinct samples (more than 4 billion)");
  if ((size_ + 1) * 4 > slots_.size() * 3) {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.sample != kEmpty) place(s.hash, s.sample);
  }
  place(h, static_cast<uint32_t>(sample));
  ++size_;
}

SampleMerger::SampleMerger(Profile& profile)
    : profile_(profile), index_(profile.sample_count()) {
  profile_.merge_identical_samples();
  for (size_t i = 0; i < profile_.sample_count(); ++i)
    index_.insert(sample_hash(profile_.stack(i), profile_.labels(i)), i);
}

size_t SampleMerger::add(std::span<const LocationId> stack, std::span<const int64_t> values,
                         std::span<const Label> labels) {
  return add(sample_hash(stack, labels), stack, values, labels);
}

size_t SampleMerger::add(uint64_t h, std::span<const LocationId> stack,
                         std::span<const int64_t> values, std::span<const Label> labels) {
  if (auto found = index_.find(profile_, h, stack, labels)) {
    auto into = profile_.values(*found);
    if (values.size() != into.size())
      throw std::logic_error("SampleMerger: value count differs from sample types");
    for (size_t k = 0; k < into.size(); ++k) into[k] = add_saturating(into[k], values[k]);
    return *found;
  }
  size_t index = profile_.sample_count();
  profile_.add_sample(stack, values, labels);
  profile_.samples_distinct_ = true;  // still true: this sample is new
  index_.insert(h, index);
  return index;
}

}  // namespace tally::core
