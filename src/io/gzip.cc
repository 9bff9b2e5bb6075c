#include "io/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace tally::io {

bool is_gzip(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

core::Expected<std::vector<uint8_t>> gunzip(std::span<const uint8_t> bytes,
                                            const std::string& source, uint64_t max_output) {
  std::vector<uint8_t> out;
  // Start from a guess based on the input's real size, never on a field in it.
  out.reserve(std::min<size_t>(bytes.size() * 4, size_t(64) << 20));
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return core::Error{source + ": zlib init failed"};
  size_t consumed = 0;
  uint8_t buf[1 << 16];
  int rc = Z_OK;
  while (true) {
    size_t chunk = std::min<size_t>(bytes.size() - consumed, std::numeric_limits<uInt>::max());
    zs.next_in = const_cast<Bytef*>(bytes.data() + consumed);
    zs.avail_in = static_cast<uInt>(chunk);
    zs.next_out = buf;
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    consumed += chunk - zs.avail_in;
    out.insert(out.end(), buf, buf + (sizeof buf - zs.avail_out));
    if (out.size() > max_output) {
      inflateEnd(&zs);
      return core::Error{source + ": decompressed data exceeds " + std::to_string(max_output) +
                         " bytes; refusing to continue"};
    }
    if (rc == Z_STREAM_END) {
      // Concatenated members are one stream (gzip(1) semantics); trailing zeros are padding.
      bool more = consumed < bytes.size() &&
                  !std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(consumed), bytes.end(),
                               [](uint8_t b) { return b == 0; });
      if (!more) break;
      inflateReset(&zs);
      continue;
    }
    if (rc == Z_BUF_ERROR && consumed == bytes.size() && zs.avail_out != 0) {
      inflateEnd(&zs);
      return core::Error{source + ": byte " + std::to_string(consumed) +
                         ": gzip data is truncated (stream ends before its trailer)"};
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string msg = zs.msg ? zs.msg : "corrupt data";
      inflateEnd(&zs);
      return core::Error{source + ": byte " + std::to_string(consumed) + ": gzip: " + msg};
    }
  }
  inflateEnd(&zs);
  return out;
}

std::string gzip(std::string_view data, int level) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib deflateInit2 failed");
  std::string out;
  out.resize(deflateBound(&zs, static_cast<uLong>(data.size())) + 64);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib deflate failed");
  out.resize(zs.total_out);
  return out;
}

}  // namespace tally::io
