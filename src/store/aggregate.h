// What the daemon holds in memory between flushes (DCPI's dcpid): per image and event a
// histogram of instruction offsets, and per image the call stacks of the samples whose
// leaf is in it. Filled sample by sample; Database::flush writes it out and takes away
// what was written, so that what a failed flush (a full disk) could not write is still
// here for the next one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/image_index.h"

namespace tally::store {

struct EventInfo {
  std::string name;            // "cpu-clock": the DCPI event line and the file name
  std::string unit = "count";  // what one period counts: "count", "nanoseconds"
};

// One frame: an image (Aggregate::image's index) and an offset from the image's tstart
// (for a file, its file offset).
struct Frame {
  uint32_t image = 0;
  uint32_t offset = 0;
  bool operator==(const Frame&) const = default;
};

class Aggregate {
 public:
  struct Histogram {
    std::unordered_map<uint32_t, uint64_t> counts;  // offset -> samples
    uint64_t samples = 0;
    uint64_t period_sum = 0;  // of the samples' periods, for the file's mean period
    bool empty() const { return samples == 0; }
  };
  struct StackHash {
    size_t operator()(const std::vector<uint64_t>& frames) const;
  };
  // A stack: frames leaf first, each image << 32 | offset; the counts per event.
  using StackMap = std::unordered_map<std::vector<uint64_t>, std::vector<uint64_t>, StackHash>;
  struct Image {
    IndexEntry entry;
    uint64_t tstart = 0;  // the address offsets count from: 0 for files (file offsets)
    uint64_t tsize = 0;   // covers every mapped text range seen
    std::vector<Histogram> histograms;  // per event
    StackMap stacks;
  };

  // `keep_stacks`: record call stacks (stacks.pb.gz) besides the histograms.
  Aggregate(std::vector<EventInfo> events, bool keep_stacks);

  const std::vector<EventInfo>& events() const { return events_; }
  bool keeps_stacks() const { return keep_stacks_; }

  // The index of the image `entry.id`, added when new; its tsize grows to `tsize`.
  uint32_t image(const IndexEntry& entry, uint64_t tstart, uint64_t tsize);
  size_t image_count() const { return images_.size(); }
  Image& image_data(uint32_t image) { return images_[image]; }
  const Image& image_data(uint32_t image) const { return images_[image]; }

  // One sample of event `event`: `stack` leaf first, at least one frame; `period` is the
  // count (or nanoseconds) of the event the sample stands for. `count` samples at once
  // (tally daemon --off-cpu: a span's milliseconds, each a sample of period 1 ms).
  void add_sample(size_t event, std::span<const Frame> stack, uint64_t period, uint64_t count = 1);

  // Samples held (not flushed yet), over every event.
  uint64_t pending_samples() const { return pending_; }
  // After a flush wrote an image's histogram of `event`, or its stacks.
  void clear_histogram(uint32_t image, size_t event);
  void clear_stacks(uint32_t image);

 private:
  std::vector<EventInfo> events_;
  bool keep_stacks_;
  std::vector<Image> images_;
  std::unordered_map<std::string, uint32_t> by_id_;
  uint64_t pending_ = 0;
  std::vector<uint64_t> key_;  // reused by add_sample
};

}  // namespace tally::store
