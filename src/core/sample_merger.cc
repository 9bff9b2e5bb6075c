#include "core/sample_merger.h"

#include <algorithm>
#include <stdexcept>

#include "core/checked_math.h"
#include "core/hash.h"

namespace tally::core {

SampleMerger::SampleMerger(Profile& profile) : profile_(profile) {
  slots_.resize(1024);
  while (slots_.size() * 3 < profile_.sample_count() * 4 + 4) slots_.resize(slots_.size() * 2);
  for (size_t i = 0; i < profile_.sample_count(); ++i)
    insert_slot(hash(profile_.stack(i), profile_.labels(i)), static_cast<uint32_t>(i));
}

uint64_t SampleMerger::hash(std::span<const LocationId> stack,
                            std::span<const Label> labels) const {
  uint64_t h = hash_words(stack);
  for (const Label& l : labels) {
    h = mix64(h ^ (uint64_t(l.key) << 32 | l.str));
    h = mix64(h ^ static_cast<uint64_t>(l.num) ^ (uint64_t(l.num_unit) << 48));
  }
  return h;
}

bool SampleMerger::same(size_t sample, std::span<const LocationId> stack,
                        std::span<const Label> labels) const {
  auto s = profile_.stack(sample);
  auto l = profile_.labels(sample);
  return std::equal(s.begin(), s.end(), stack.begin(), stack.end()) &&
         std::equal(l.begin(), l.end(), labels.begin(), labels.end());
}

void SampleMerger::insert_slot(uint64_t h, uint32_t sample) {
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (slots_[i].sample == kEmpty) {
      slots_[i] = Slot{h, sample};
      return;
    }
  }
}

void SampleMerger::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  for (const Slot& s : old)
    if (s.sample != kEmpty) insert_slot(s.hash, s.sample);
}

size_t SampleMerger::add(std::span<const LocationId> stack, std::span<const int64_t> values,
                         std::span<const Label> labels) {
  uint64_t h = hash(stack, labels);
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.sample == kEmpty) break;
    if (s.hash == h && same(s.sample, stack, labels)) {
      auto into = profile_.values(s.sample);
      if (values.size() != into.size())
        throw std::logic_error("SampleMerger: value count differs from sample types");
      for (size_t k = 0; k < into.size(); ++k) into[k] = add_saturating(into[k], values[k]);
      return s.sample;
    }
  }
  if (profile_.sample_count() >= kEmpty - 1)
    throw std::length_error("too many distinct samples (more than 4 billion)");
  auto index = static_cast<uint32_t>(profile_.sample_count());
  profile_.add_sample(stack, values, labels);
  if ((profile_.sample_count() + 1) * 4 > slots_.size() * 3) grow();
  insert_slot(h, index);
  return index;
}

}  // namespace tally::core
