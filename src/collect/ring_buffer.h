// The perf ring buffer of one event fd: a control page (data_head written by the kernel,
// data_tail by us) followed by 2^n data pages of records. Records are copied out (a
// record that wraps around the end of the data area is joined), so that what the sampler
// decodes and sorts never changes under it, and the kernel gets the space back at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/error.h"

namespace tally::collect {

// Records copied out of rings: each starts on an 8-byte boundary of `words`.
struct RecordBuffer {
  struct Ref {
    size_t word = 0;    // where the record starts in `words`
    uint32_t size = 0;  // bytes (header.size)
    uint32_t ring = 0;  // which ring it came from
  };
  std::vector<uint64_t> words;
  std::vector<Ref> records;

  std::span<const uint8_t> bytes(const Ref& r) const {
    return {reinterpret_cast<const uint8_t*>(words.data() + r.word), r.size};
  }
  void clear() {
    words.clear();
    records.clear();
  }
};

struct RingReadResult {
  uint64_t tail = 0;         // the new data_tail
  uint64_t bytes = 0;        // bytes of the records copied out
  uint64_t bad_bytes = 0;    // skipped after a record header that made no sense
};

// Copies the complete records between `tail` and `head` of a ring's data area (`data`,
// a power-of-two size) into `out`. A header whose size is under 8, not a multiple of 8
// or past `head` ends the read there: the rest up to `head` is skipped and counted in
// bad_bytes (the kernel writes whole records, so this means the ring is corrupt). More
// than the ring's size between tail and head is treated the same way.
RingReadResult copy_ring_records(std::span<const uint8_t> data, uint64_t tail, uint64_t head,
                                 uint32_t ring, RecordBuffer& out);

class RingBuffer {
 public:
  // mmap()s 1 + data_pages pages of `fd` (data_pages a power of two). Errors name the
  // size and, for EPERM, the perf_event_mlock_kb limit.
  static core::Expected<RingBuffer> map(int fd, size_t data_pages);
  RingBuffer(RingBuffer&& other) noexcept;
  RingBuffer& operator=(RingBuffer&&) = delete;
  ~RingBuffer();

  int fd() const { return fd_; }
  size_t data_size() const { return data_size_; }
  // Copies every complete record out and hands the space back to the kernel.
  RingReadResult read(uint32_t ring, RecordBuffer& out);
  // True when records are waiting (data_head != data_tail).
  bool has_data() const;

 private:
  RingBuffer(int fd, void* base, size_t mapped, size_t data_size)
      : fd_(fd), base_(base), mapped_(mapped), data_size_(data_size) {}
  int fd_ = -1;
  void* base_ = nullptr;
  size_t mapped_ = 0;
  size_t data_size_ = 0;
};

}  // namespace tally::collect
