// A location's lines (pprof's Location.line): a vector of Line that holds one line in
// place. Nearly every location has exactly one line (a symbolized 1M-sample clang profile:
// 171,105 lines on 170,846 locations), and a heap block per location cost 32 bytes and a
// malloc each; only inline chains (two or more lines) go to the heap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace tally::core {

using FunctionId = uint32_t;

struct Line {
  FunctionId function = 0;
  int64_t line = 0;
  int64_t column = 0;
  bool operator==(const Line&) const = default;
};

class LineList {
 public:
  using value_type = Line;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = Line&;
  using const_reference = const Line&;
  using pointer = Line*;
  using const_pointer = const Line*;
  using iterator = Line*;
  using const_iterator = const Line*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  LineList() noexcept : one_{} {}
  LineList(std::initializer_list<Line> lines) : LineList() { assign(lines.begin(), lines.end()); }
  template <std::input_iterator It>
  LineList(It first, It last) : LineList() {
    assign(first, last);
  }
  LineList(const LineList& other) : LineList() { assign(other.begin(), other.end()); }
  LineList(LineList&& other) noexcept : LineList() { take(other); }
  LineList& operator=(const LineList& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  LineList& operator=(LineList&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  LineList& operator=(std::initializer_list<Line> lines) {
    assign(lines.begin(), lines.end());
    return *this;
  }
  ~LineList() { release(); }

  Line* data() noexcept { return on_heap() ? heap_ : &one_; }
  const Line* data() const noexcept { return on_heap() ? heap_ : &one_; }
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return capacity_; }

  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  Line& operator[](size_t i) noexcept { return data()[i]; }
  const Line& operator[](size_t i) const noexcept { return data()[i]; }
  Line& at(size_t i) {
    if (i >= size_) throw std::out_of_range("LineList::at");
    return data()[i];
  }
  const Line& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("LineList::at");
    return data()[i];
  }
  Line& front() noexcept { return data()[0]; }
  const Line& front() const noexcept { return data()[0]; }
  Line& back() noexcept { return data()[size_ - 1]; }
  const Line& back() const noexcept { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity_) grow_to(n);
  }
  void push_back(const Line& line) {
    if (size_ == capacity_) {
      const Line copy = line;  // `line` may be one of ours, moved by the growth
      grow_to(next_capacity())[size_++] = copy;
      return;
    }
    data()[size_++] = line;
  }
  template <class... Args>
  Line& emplace_back(Args&&... args) {
    push_back(Line{std::forward<Args>(args)...});
    return back();
  }
  void pop_back() noexcept { --size_; }
  void clear() noexcept { size_ = 0; }
  void resize(size_t n) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = Line{};
    size_ = static_cast<uint32_t>(n);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    if constexpr (std::forward_iterator<It>) {
      const auto n = static_cast<size_t>(std::distance(first, last));
      if (n > capacity_) {
        // Not grow_to: the source may be our own lines, which it would free.
        LineList fresh;
        std::copy(first, last, fresh.grow_to(n));
        fresh.size_ = static_cast<uint32_t>(n);
        *this = std::move(fresh);
        return;
      }
      std::copy(first, last, data());
      size_ = static_cast<uint32_t>(n);
    } else {
      clear();
      for (; first != last; ++first) push_back(*first);
    }
  }

  friend bool operator==(const LineList& a, const LineList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  static_assert(std::is_trivially_copyable_v<Line> && std::is_trivially_destructible_v<Line>);
  static constexpr size_t kMaxSize = std::numeric_limits<uint32_t>::max();

  bool on_heap() const noexcept { return capacity_ > 1; }
  size_t next_capacity() const {
    if (capacity_ >= kMaxSize) throw std::length_error("LineList: too many lines");
    return std::min<size_t>(size_t{capacity_} * 2, kMaxSize);
  }
  // Moves the lines to a heap block of `n` lines (n > capacity_), which it returns.
  Line* grow_to(size_t n) {
    if (n > kMaxSize) throw std::length_error("LineList: too many lines");
    Line* block = static_cast<Line*>(::operator new(n * sizeof(Line)));
    std::copy(begin(), end(), block);
    release();
    heap_ = block;
    capacity_ = static_cast<uint32_t>(n);
    return block;
  }
  void release() noexcept {
    if (on_heap()) ::operator delete(heap_);
    one_ = Line{};
    capacity_ = 1;
  }
  // Takes `other`'s lines (this one holds none); `other` is left empty.
  void take(LineList& other) noexcept {
    if (other.on_heap()) {
      heap_ = other.heap_;
    } else {
      one_ = other.one_;
    }
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.one_ = Line{};
    other.size_ = 0;
    other.capacity_ = 1;
  }

  union {
    Line one_;    // capacity_ == 1
    Line* heap_;  // capacity_ > 1
  };
  uint32_t size_ = 0;
  uint32_t capacity_ = 1;
};

}  // namespace tally::core
