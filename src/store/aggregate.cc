#include "store/aggregate.h"

#include <algorithm>

#include "core/hash.h"

namespace tally::store {

size_t Aggregate::StackHash::operator()(const std::vector<uint64_t>& frames) const {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ frames.size();
  for (uint64_t f : frames) h = core::mix64(h ^ f);
  return static_cast<size_t>(h);
}

Aggregate::Aggregate(std::vector<EventInfo> events, bool keep_stacks)
    : events_(std::move(events)), keep_stacks_(keep_stacks) {}

uint32_t Aggregate::image(const IndexEntry& entry, uint64_t tstart, uint64_t tsize) {
  auto [it, added] = by_id_.try_emplace(entry.id, static_cast<uint32_t>(images_.size()));
  if (added) {
    images_.push_back({entry, tstart, tsize, {}, {}});
    images_.back().histograms.resize(events_.size());
  } else {
    Image& image = images_[it->second];
    image.tsize = std::max(image.tsize, tsize);
  }
  return it->second;
}

void Aggregate::add_sample(size_t event, std::span<const Frame> stack, uint64_t period,
                           uint64_t count) {
  if (stack.empty() || event >= events_.size() || count == 0) return;
  Image& leaf = images_[stack[0].image];
  Histogram& h = leaf.histograms[event];
  h.counts[stack[0].offset] += count;
  h.samples += count;
  h.period_sum += period * count;
  pending_ += count;
  if (!keep_stacks_) return;
  key_.clear();
  for (const Frame& f : stack) key_.push_back(uint64_t(f.image) << 32 | f.offset);
  auto it = leaf.stacks.find(key_);
  if (it == leaf.stacks.end()) it = leaf.stacks.emplace(key_, std::vector<uint64_t>(events_.size())).first;
  it->second[event] += count;
}

void Aggregate::clear_histogram(uint32_t image, size_t event) {
  Histogram& h = images_[image].histograms[event];
  pending_ -= h.samples;
  h = Histogram{};
}

void Aggregate::clear_stacks(uint32_t image) { images_[image].stacks = StackMap{}; }

}  // namespace tally::store
