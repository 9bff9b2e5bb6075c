// gzip (RFC 1952) with zlib: profiles may arrive compressed (pprof always is).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"

namespace tally::io {

bool is_gzip(std::span<const uint8_t> bytes);

// Inflates every gzip member of `bytes`. Fails with a clear message on corrupt or
// truncated data, and when the output would exceed `max_output` bytes.
core::Expected<std::vector<uint8_t>> gunzip(std::span<const uint8_t> bytes,
                                            const std::string& source,
                                            uint64_t max_output = uint64_t(16) << 30);

std::string gzip(std::string_view data, int level = 6);

// Compresses data handed over piece by piece, so that a writer never holds both the whole
// uncompressed and the whole compressed output. The data is cut into 8 MB blocks, each its
// own gzip member (a multi-member file, which gzip(1), zlib, Go and Python read as one
// stream, about 0.1% larger), compressed on `threads` threads at once.
class GzipWriter {
 public:
  explicit GzipWriter(int level = 6, unsigned threads = 1);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;
  void write(std::string_view data);
  std::string finish();  // the complete output

  static unsigned all_cores();

 private:
  struct State;
  State* state_;
};

}  // namespace tally::io
