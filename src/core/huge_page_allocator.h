// An allocator for the model's big flat arrays (sample stacks, values, labels): blocks of
// 4 MB and more come straight from mmap with MADV_HUGEPAGE, so that filling a GB of samples
// takes 2 MB page faults instead of 4 KB ones. With transparent huge pages in "madvise"
// mode (Debian's default) this halved the time to read a 115 MB callgrind file, most of
// which was the kernel faulting pages in. Smaller blocks use operator new.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <vector>

namespace tally::core {

template <typename T>
class HugePageAllocator {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
 public:
  using value_type = T;
  static constexpr size_t kThreshold = size_t{4} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kThreshold) return static_cast<T*>(::operator new(bytes));
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP it changes nothing
    return static_cast<T*>(p);
  }

  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes < kThreshold)
      ::operator delete(p);
    else
      ::munmap(p, bytes);
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};

// A std::vector whose big buffers are backed by huge pages.
template <typename T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace tally::core
