#include "collect/ring_buffer.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace tally::collect {

RingReadResult copy_ring_records(std::span<const uint8_t> data, uint64_t tail, uint64_t head,
                                 uint32_t ring, RecordBuffer& out) {
  RingReadResult result{.tail = tail};
  const uint64_t size = data.size();
  if (size == 0 || (size & (size - 1)) != 0 || head - tail > size) {
    result.bad_bytes = head - tail;
    result.tail = head;
    return result;
  }
  const uint64_t mask = size - 1;
  // Copies `n` bytes starting at ring position `from`, joining the two pieces of a wrap.
  auto copy = [&](uint64_t from, uint64_t n, uint8_t* to) {
    uint64_t at = from & mask;
    uint64_t first = std::min(n, size - at);
    std::memcpy(to, data.data() + at, first);
    if (first < n) std::memcpy(to + first, data.data(), n - first);
  };
  while (head - tail >= sizeof(perf_event_header)) {
    perf_event_header h;
    copy(tail, sizeof h, reinterpret_cast<uint8_t*>(&h));
    if (h.size < sizeof h || h.size % 8 != 0 || h.size > head - tail) {
      result.bad_bytes = head - tail;
      tail = head;
      break;
    }
    size_t word = out.words.size();
    out.words.resize(word + h.size / 8);
    copy(tail, h.size, reinterpret_cast<uint8_t*>(out.words.data() + word));
    out.records.push_back({.word = word, .size = h.size, .ring = ring});
    tail += h.size;
    result.bytes += h.size;
  }
  // A fragment shorter than a header: the kernel never leaves one, so it is skipped.
  if (tail != head && head - tail < sizeof(perf_event_header)) {
    result.bad_bytes += head - tail;
    tail = head;
  }
  result.tail = tail;
  return result;
}

core::Expected<RingBuffer> RingBuffer::map(int fd, size_t data_pages) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (data_pages == 0 || (data_pages & (data_pages - 1)) != 0)
    return core::Error{fmt::format("ring buffer of {} pages: not a power of two", data_pages),
                       core::ErrorKind::unsupported};
  size_t mapped = (1 + data_pages) * page;
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int err = errno;
    std::string why = std::strerror(err);
    if (err == EPERM)
      why += "; the locked-memory limit for perf buffers is kernel.perf_event_mlock_kb "
             "(/proc/sys/kernel/perf_event_mlock_kb) plus RLIMIT_MEMLOCK";
    return core::Error{fmt::format("cannot map a perf ring buffer of {} KiB: {}",
                                   data_pages * page / 1024, why),
                       core::ErrorKind::io};
  }
  return RingBuffer(fd, base, mapped, data_pages * page);
}

RingBuffer::RingBuffer(RingBuffer&& other) noexcept
    : fd_(other.fd_), base_(other.base_), mapped_(other.mapped_), data_size_(other.data_size_) {
  other.base_ = nullptr;
  other.fd_ = -1;
}

RingBuffer::~RingBuffer() {
  if (base_) munmap(base_, mapped_);
}

bool RingBuffer::has_data() const {
  auto* control = static_cast<perf_event_mmap_page*>(base_);
  return __atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE) != control->data_tail;
}

RingReadResult RingBuffer::read(uint32_t ring, RecordBuffer& out) {
  auto* control = static_cast<perf_event_mmap_page*>(base_);
  // Acquire: the records before data_head are complete once we see it (the kernel's
  // smp_wmb before publishing it); release: our reads are done before the kernel may
  // overwrite the space we hand back.
  uint64_t head = __atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = control->data_tail;
  const uint8_t* data = static_cast<const uint8_t*>(base_) + (mapped_ - data_size_);
  RingReadResult r = copy_ring_records({data, data_size_}, tail, head, ring, out);
  __atomic_store_n(&control->data_tail, r.tail, __ATOMIC_RELEASE);
  return r;
}

}  // namespace tally::collect
