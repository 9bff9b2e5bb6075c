// Input: the bytes of one input file, memory-mapped when it is a regular file (no copy,
// pages dropped behind a streaming parser), read fully when it is a pipe or stdin ("-"),
// and transparently inflated when it is gzip-compressed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace tally::io {

class Input {
 public:
  // `path` "-" reads standard input.
  static core::Expected<Input> open(const std::string& path);
  // An in-memory input (tests, fuzzers, decompressed data).
  static Input from_bytes(std::string name, std::vector<uint8_t> bytes);

  Input(Input&&) noexcept;
  Input& operator=(Input&&) noexcept;
  ~Input();

  const std::string& name() const { return name_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  std::string_view text() const { return {reinterpret_cast<const char*>(data_), size_}; }
  bool was_gzipped() const { return was_gzipped_; }

  // A streaming parser is done with everything before `offset`: the kernel may drop
  // those pages, so a 300 MB file is parsed without 300 MB of resident memory.
  void release_before(uint64_t offset) const;
  // The caller is done, for now, with bytes [offset, offset + size) of a mapped file: their
  // pages leave the resident set (and come back from the file if read again).
  void release(uint64_t offset, uint64_t size) const;

 private:
  Input() = default;
  void reset();

  std::string name_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // non-null when memory-mapped
  mutable size_t released_ = 0;
  std::vector<uint8_t> owned_;
  bool was_gzipped_ = false;
};

}  // namespace tally::io
