// A DCPI profile file, major version 0 (pdb-0.06 / pdb-0.07; spec: dcpiformat.4.txt):
// an ASCII header of "key value" lines ended by a "samples" line, then chunks of
// little-endian uint32 sample counts for runs of instruction addresses (offsets from
// tstart), then a footer (addresses with samples, total samples). DcpiFile keeps every
// header line in its order (unknown lines included, as the spec asks of every program that
// rewrites profiles) and every chunk as read, so read -> write is byte-identical.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "core/error.h"

namespace tally::dcpi {

struct HeaderLine {
  std::string key;
  std::string value;
  bool operator==(const HeaderLine&) const = default;
};

struct Chunk {
  uint32_t offset = 0;           // from tstart
  std::vector<uint32_t> counts;  // one per address offset, offset + 1, ...
  bool operator==(const Chunk&) const = default;
};

// An epoch line's time: YYMMDDHHMM (UTC) or the long form YYYYMMDDHHMMSS.
struct Epoch {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  bool long_form = false;
  int64_t unix_seconds() const;
  static std::optional<Epoch> parse(std::string_view text);
  static Epoch from_unix_seconds(int64_t seconds, bool long_form);
  std::string format() const;
};

struct DcpiFile {
  std::vector<HeaderLine> header;  // file order
  std::vector<Chunk> chunks;       // strictly increasing, non-overlapping

  // The value of the first header line with this key.
  std::optional<std::string_view> value(std::string_view key) const;
  // Footer values computed from the chunks.
  uint64_t total_offsets() const;
  uint64_t total_samples() const;
};

// Typed view of the fields the spec defines (validated by the reader).
struct Fields {
  unsigned major = 0, minor = 0;
  std::string image;  // hex digits as written
  Epoch epoch;
  std::string platform, event;
  uint64_t period = 0;
  uint64_t tstart = 0;
  uint64_t tsize = 0;
  uint64_t cpuspeed = 0;
  std::optional<std::string> path, cpuamask;
  std::optional<uint64_t> cpuimplv, cpucount;
};

// True when the bytes start like a DCPI header: "key value" lines including a
// "version pdb-" line before a "samples" line.
bool looks_like_dcpi(std::span<const uint8_t> bytes);

core::Expected<DcpiFile> read_dcpi(std::span<const uint8_t> bytes, const std::string& source,
                                   core::Diagnostics& diagnostics);

// Validates the header lines against the grammar and extracts the typed fields.
core::Expected<Fields> parse_fields(const DcpiFile& file, const std::string& source);

// A histogram (offset from tstart -> count) as chunks. A new chunk costs 8 bytes, a zero
// count 4: runs are joined across a single address without samples and split at two or more.
std::vector<Chunk> make_chunks(const std::map<uint32_t, uint32_t>& counts);

// The file's bytes: header lines "key value", the "samples" line padded with spaces so the
// binary part starts on a 4-byte boundary, chunks, footer. Fails if the footer's totals do
// not fit in 32 bits.
core::Expected<std::string> write_dcpi(const DcpiFile& file);

}  // namespace tally::dcpi
