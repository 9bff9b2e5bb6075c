#include "synthetic_profile.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "synthetic_program.h"

namespace tally::bench {

namespace {

// Buffers 64-bit little-endian words and text, handing full chunks to the sink.
class Encoder {
 public:
  explicit Encoder(const ByteSink& sink) : sink_(sink) { buffer_.reserve(kChunk); }
  void word(uint64_t v) {
    uint8_t le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(v >> (8 * i));
    append(le, 8);
  }
  void text(const std::string& s) { append(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
  void flush() {
    if (!buffer_.empty()) sink_(buffer_.data(), buffer_.size());
    bytes_ += buffer_.size();
    buffer_.clear();
  }
  uint64_t bytes() const { return bytes_ + buffer_.size(); }

 private:
  static constexpr size_t kChunk = size_t(1) << 20;
  void append(const uint8_t* p, size_t n) {
    buffer_.insert(buffer_.end(), p, p + n);
    if (buffer_.size() >= kChunk) flush();
  }
  const ByteSink& sink_;
  std::vector<uint8_t> buffer_;
  uint64_t bytes_ = 0;
};

// Counts what is written, for SyntheticStats.
class RecordCounter {
 public:
  void add(uint64_t count, const uint64_t* pcs, size_t n) {
    ++stats_.records;
    stats_.samples += count;
    // Two independent 64-bit hashes: a collision of both is out of the question.
    uint64_t a = 0x243f6a8885a308d3ULL, b = 0x13198a2e03707344ULL;
    for (size_t i = 0; i < n; ++i) {
      a = (a ^ pcs[i]) * 0x100000001b3ULL;
      b = ((b ^ pcs[i]) * 0xff51afd7ed558ccdULL) ^ (b >> 29);
      pcs_.insert(pcs[i]);
    }
    stacks_.insert({a, b});
  }
  uint64_t records() const { return stats_.records; }
  SyntheticStats finish(uint64_t bytes) {
    stats_.distinct_stacks = stacks_.size();
    stats_.distinct_pcs = pcs_.size();
    stats_.bytes = bytes;
    return stats_;
  }

 private:
  struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& p) const { return p.first ^ p.second; }
  };
  SyntheticStats stats_;
  std::unordered_set<std::pair<uint64_t, uint64_t>, PairHash> stacks_;
  std::unordered_set<uint64_t> pcs_;
};

// gperftools' ProfileData table (profiledata.cc): 1024 buckets of 4 entries, the bucket
// chosen by its own rotate-and-add hash; a miss evicts the entry with the smallest count.
// Stacks here all have the same depth, so entries are fixed-size rows of one array.
class EvictionTable {
 public:
  static constexpr size_t kBuckets = 1024, kAssociativity = 4;
  using Evict = std::function<void(uint64_t count, const uint64_t* pcs)>;

  EvictionTable(unsigned depth, Evict evict)
      : depth_(depth), evict_(std::move(evict)),
        pcs_(kBuckets * kAssociativity * depth), counts_(kBuckets * kAssociativity, 0) {}

  void add(const std::vector<uint64_t>& stack) {
    uint64_t h = 0;
    for (uint64_t pc : stack) {
      h = (h << 8) | (h >> 56);
      h += pc * 31 + pc * 7 + pc * 3;
    }
    const size_t first = (h % kBuckets) * kAssociativity;
    for (size_t e = first; e < first + kAssociativity; ++e) {
      if (counts_[e] > 0 && std::equal(stack.begin(), stack.end(), row(e))) {
        ++counts_[e];
        return;
      }
    }
    size_t victim = first;
    for (size_t e = first + 1; e < first + kAssociativity; ++e)
      if (counts_[e] < counts_[victim]) victim = e;
    if (counts_[victim] > 0) evict_(counts_[victim], row(victim));
    else ++occupied_;
    std::copy(stack.begin(), stack.end(), row(victim));
    counts_[victim] = 1;
  }
  // Evicts every entry, in bucket order, as ProfileData::Stop does.
  void flush() {
    for (size_t e = 0; e < counts_.size(); ++e) {
      if (counts_[e] == 0) continue;
      evict_(counts_[e], row(e));
      counts_[e] = 0;
    }
    occupied_ = 0;
  }
  uint64_t occupied() const { return occupied_; }

 private:
  uint64_t* row(size_t entry) { return pcs_.data() + entry * depth_; }
  unsigned depth_;
  Evict evict_;
  std::vector<uint64_t> pcs_;
  std::vector<uint64_t> counts_;
  uint64_t occupied_ = 0;
};

}  // namespace

SyntheticStats write_synthetic_gperf_profile(const SyntheticOptions& options,
                                             const ByteSink& sink) {
  if (options.depth < 1) throw std::invalid_argument("depth must be at least 1");
  if (options.period_us == 0) throw std::invalid_argument("period must be positive");
  const SyntheticProgram program(options.seed, options.functions);
  Encoder out(sink);
  RecordCounter counter;
  for (uint64_t slot : {uint64_t(0), uint64_t(3), uint64_t(0), options.period_us, uint64_t(0)})
    out.word(slot);

  EvictionTable table(options.depth, [&](uint64_t count, const uint64_t* pcs) {
    out.word(count);
    out.word(options.depth);
    for (unsigned i = 0; i < options.depth; ++i) out.word(pcs[i]);
    counter.add(count, pcs, options.depth);
  });
  // Each miss adds exactly one to (records written + entries occupied): stop at the target.
  Rng rng(options.seed);
  std::vector<uint64_t> stack;
  // A program with very few distinct stacks would never fill the table: give up then.
  const uint64_t max_samples = 100 * options.records + 1'000'000;
  for (uint64_t samples = 0; counter.records() + table.occupied() < options.records; ++samples) {
    if (samples == max_samples)
      throw std::runtime_error("the synthetic program has too few distinct stacks for " +
                               std::to_string(options.records) + " records (depth too small?)");
    program.sample_stack(rng, options.depth, stack);
    table.add(stack);
  }
  table.flush();

  for (uint64_t slot : {uint64_t(0), uint64_t(1), uint64_t(0)}) out.word(slot);
  out.text(program.maps_text());
  out.flush();
  return counter.finish(out.bytes());
}

std::vector<uint8_t> synthetic_gperf_profile(const SyntheticOptions& options,
                                             SyntheticStats* stats) {
  std::vector<uint8_t> bytes;
  bytes.reserve(options.records * (options.depth + 2) * 8 + 8192);
  SyntheticStats s = write_synthetic_gperf_profile(
      options, [&](const uint8_t* data, size_t size) { bytes.insert(bytes.end(), data, data + size); });
  if (stats) *stats = s;
  return bytes;
}

}  // namespace tally::bench
