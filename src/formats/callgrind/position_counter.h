// What a full read of a callgrind file would make, counted by the read by function
// (`tally cat --summary`) without a location each: distinct positions, self costs per part,
// calls and jumps per part. The reader gives every cost line's position and every call and
// jump as a CountOp, counted here at once or, when the reader lexes on other threads, on a
// thread of its own (CountingThread): the counts are sizes of sets, the same in any case.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/hash.h"
#include "core/position_detail.h"

namespace tally::callgrind {

struct CountOp {
  enum class Kind : uint8_t { self, call, jump };
  uint64_t addr = 0;     // the position: of the cost line, or a call's or jump's source
  uint64_t to_addr = 0;  // calls and jumps: the target
  uint32_t context = 0, line = 0;
  uint32_t to_context = 0, to_line = 0;
  uint32_t part = 0;  // self: 1 + part index; calls: part index; jumps: part << 1 | conditional
  Kind kind = Kind::self;
};

class PositionCounter {
 public:
  explicit PositionCounter(core::PositionCounts& counts) : counts_(counts) {}

  void count(const CountOp& op) {
    if (op.kind != CountOp::Kind::self) return pair(op);
    CountedPosition& counted = count_position(op.context, op.addr, op.line);
    if (counted.self_part != op.part) {
      counted.self_part = op.part;
      ++counts_.samples;
    }
  }

 private:
  // By function with counts_: what the full read would make, counted without a location
  // each. Per context (so that the tables of the function being read stay in cache, where
  // one table for all missed on every line: 45% of the full read), the distinct positions
  // and the distinct calls and jumps from them. valgrind lists a function's positions
  // mostly in ascending order (99% of them in a clang -cc1 profile): those are appended to
  // an array, sequential memory and no hash; the rest, and calls and jumps, go in an
  // OrderedSet: in the order first seen, with a hash index. Both have a cursor at the last
  // one found: valgrind lists a function's lines in the same order in every part, so a line
  // is most often the one after it, checked first.
  template <typename T>
  class OrderedSet {
   public:
    // The element equal to `key`, added if new (`added`); the reference holds until the
    // next call.
    T& find_or_add(const T& key, bool& added) {
      added = false;
      if (T* near = find_near(key)) return *near;
      if ((items_.size() + 1) * 2 > index_.size()) grow();
      const size_t mask = index_.size() - 1;
      for (size_t i = key.hash() & mask;; i = (i + 1) & mask) {
        const uint32_t k = index_[i];
        if (k == 0) {
          index_[i] = static_cast<uint32_t>(items_.size() + 1);
          items_.push_back(key);
          added = true;
          return at(items_.size() - 1);
        }
        if (items_[k - 1].same(key)) return at(k - 1);
      }
    }

    // The element at or after the cursor if it is `key`, else null.
    T* find_near(const T& key) {
      for (size_t i = cursor_; i < items_.size() && i <= size_t(cursor_) + 1; ++i)
        if (items_[i].same(key)) return &at(i);
      return nullptr;
    }

   private:
    T& at(size_t i) {
      cursor_ = static_cast<uint32_t>(i);
      return items_[i];
    }
    void grow() {
      std::vector<uint32_t> index(index_.empty() ? 8 : index_.size() * 2, 0);
      const size_t mask = index.size() - 1;
      for (size_t k = 0; k < items_.size(); ++k) {
        size_t i = items_[k].hash() & mask;
        while (index[i] != 0) i = (i + 1) & mask;
        index[i] = static_cast<uint32_t>(k + 1);
      }
      index_.swap(index);
    }
    std::vector<T> items_;
    std::vector<uint32_t> index_;  // open addressing, at most half full: 1 + item index
    uint32_t cursor_ = 0;
  };

  struct CountedPosition {
    uint64_t addr = 0;
    uint32_t line = 0;
    uint32_t self_part = 0;  // 1 + the last part with self cost
    bool same(const CountedPosition& o) const { return addr == o.addr && line == o.line; }
    uint64_t hash() const { return core::mix64(addr * 0x9e3779b97f4a7c15ULL ^ line); }
    bool before(const CountedPosition& o) const {
      return addr < o.addr || (addr == o.addr && line < o.line);
    }
  };
  // A call or jump from a position of the context to another position, in a part (jumps:
  // part << 1 | conditional).
  struct CountedPair {
    uint32_t from_line = 0, to_line = 0;
    uint64_t from_addr = 0, to_addr = 0;
    uint32_t to_context = 0, part = 0;
    bool same(const CountedPair& o) const {
      return from_addr == o.from_addr && to_addr == o.to_addr && from_line == o.from_line &&
             to_line == o.to_line && to_context == o.to_context && part == o.part;
    }
    uint64_t hash() const {
      uint64_t h = core::mix64(from_addr ^ (uint64_t(from_line) << 40));
      h = core::mix64(h ^ to_addr ^ (uint64_t(to_line) << 32));
      return core::mix64(h ^ (uint64_t(to_context) << 32 | part));
    }
  };
  struct ContextCounts {
    std::vector<CountedPosition> ascending;
    uint32_t cursor = 0;  // in ascending: the last one found
    OrderedSet<CountedPosition> others;
    OrderedSet<CountedPair> calls, jumps;
  };
  std::vector<ContextCounts> context_counts_;  // by context

  ContextCounts& counts_of(uint32_t context) {
    if (context >= context_counts_.size()) context_counts_.resize(size_t(context) + 1);
    return context_counts_[context];
  }

  // Position (addr, line) of `context`, counted when first seen; the reference holds until
  // the next call.
  CountedPosition& count_position(uint32_t context, uint64_t addr, uint32_t line) {
    const CountedPosition key{addr, line, 0};
    ContextCounts& c = counts_of(context);
    auto& ascending = c.ascending;
    if (ascending.empty() || ascending.back().before(key)) {
      ++counts_.locations;
      c.cursor = static_cast<uint32_t>(ascending.size());
      return ascending.emplace_back(key);
    }
    for (size_t i = c.cursor; i < ascending.size() && i <= size_t(c.cursor) + 1; ++i)
      if (ascending[i].same(key)) {
        c.cursor = static_cast<uint32_t>(i);
        return ascending[i];
      }
    if (CountedPosition* near = c.others.find_near(key)) return *near;
    const auto it = std::lower_bound(
        ascending.begin(), ascending.end(), key,
        [](const CountedPosition& a, const CountedPosition& b) { return a.before(b); });
    if (it != ascending.end() && it->same(key)) {
      c.cursor = static_cast<uint32_t>(it - ascending.begin());
      return *it;
    }
    bool added = false;
    CountedPosition& p = c.others.find_or_add(key, added);
    if (added) ++counts_.locations;
    return p;
  }


  // A call or jump: its source and target positions, and the pair per part.
  void pair(const CountOp& op) {
    count_position(op.context, op.addr, op.line);
    count_position(op.to_context, op.to_addr, op.to_line);
    CountedPair k;
    k.from_line = op.line;
    k.to_line = op.to_line;
    k.from_addr = op.addr;
    k.to_addr = op.to_addr;
    k.to_context = op.to_context;
    k.part = op.part;
    ContextCounts& c = counts_of(op.context);
    bool added = false;
    const bool jump = op.kind == CountOp::Kind::jump;
    (jump ? c.jumps : c.calls).find_or_add(k, added);
    if (added) ++(jump ? counts_.jumps : counts_.calls);
  }

  core::PositionCounts& counts_;
};

// A PositionCounter fed from another thread, in blocks.
class CountingThread {
 public:
  explicit CountingThread(PositionCounter& counter);
  ~CountingThread();  // drops what is not counted yet
  CountingThread(const CountingThread&) = delete;
  CountingThread& operator=(const CountingThread&) = delete;

  void push(const CountOp& op) {
    block_.push_back(op);
    if (block_.size() == kBlock) hand_off();
  }
  // Counts what is left and returns when all is counted (rethrows the thread's error).
  void finish();

 private:
  static constexpr size_t kBlock = 4096, kPendingBlocks = 8;
  void hand_off();
  void loop();

  PositionCounter& counter_;
  std::vector<CountOp> block_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<CountOp>> pending_, spare_;
  bool closing_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace tally::callgrind
