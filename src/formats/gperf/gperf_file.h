// The gperftools CPU profile as it is on disk (spec: gperftools-cpuprofile-fileformat.html):
// binary header, records (count, num_pcs, pcs...), trailer (0, 1, 0), then the text list of
// mapped objects. GperfFile keeps all of it faithfully, so that reading and writing a file
// gives the same bytes; the conversion to core::Profile is in gperf_convert.h.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/error.h"

namespace tally::gperf {

// Slot width and byte order, found from the header.
struct Layout {
  unsigned word_bytes = 8;  // 4 or 8
  std::endian order = std::endian::little;
  bool operator==(const Layout&) const = default;
};

struct Header {
  Layout layout;
  uint64_t slots_after_count = 3;  // slot 1: "header slots after this one", >= 3
  uint64_t version = 0;            // slot 2, must be 0
  uint64_t period_us = 0;          // slot 3, sampling period in microseconds, > 0
  std::vector<uint64_t> extra;     // slots 4 ...: padding and any later extensions
  uint64_t size_bytes() const { return (2 + slots_after_count) * layout.word_bytes; }
};

// One record as the scanner hands it out; pcs are decoded to host order.
struct Record {
  uint64_t offset = 0;  // byte offset of the record in the file
  uint64_t count = 0;
  std::span<const uint64_t> pcs;  // most recently called first; valid until the next record
};

struct GperfFile {
  Header header;
  // Records in file order, flattened as count, num_pcs, pc... (the file's slots).
  std::vector<uint64_t> record_slots;
  uint64_t record_count = 0;
  bool has_trailer = true;     // false: the binary part ended without (0, 1, 0)
  std::string mapped_objects;  // the text after the trailer, verbatim
};

// "64-bit little-endian"
std::string layout_name(const Layout& layout);

// True when `bytes` starts with a gperftools CPU profile header in any layout.
bool looks_like_gperf(std::span<const uint8_t> bytes);

// Streams the records of a file without holding them: the cheapest way through a huge
// profile. Throws core::FormatError; read_gperf and the converters turn that into errors.
class RecordScanner {
 public:
  // Parses the header; throws core::FormatError when no layout fits.
  explicit RecordScanner(std::span<const uint8_t> bytes);
  const Header& header() const { return header_; }
  // Next record, or false at the trailer (or at the end of the data, if there is none).
  bool next(Record& record);
  bool has_trailer() const { return has_trailer_; }
  uint64_t offset() const { return pos_; }
  // The text after the trailer; valid once next() returned false.
  std::string_view mapped_objects() const;

 private:
  uint64_t word(uint64_t at) const;
  std::span<const uint8_t> bytes_;
  Header header_;
  uint64_t pos_ = 0;
  bool done_ = false;
  bool has_trailer_ = false;
  std::vector<uint64_t> pcs_;
};

// The warning for a file whose binary part ends at byte `end` without the trailer (a profile
// cut short, e.g. by a killed process), hence without its list of mapped objects.
void warn_missing_trailer(core::Diagnostics& diagnostics, const std::string& source,
                          uint64_t end);

core::Expected<GperfFile> read_gperf(std::span<const uint8_t> bytes, const std::string& source,
                                     core::Diagnostics& diagnostics);

// The file's bytes, in the layout of file.header.layout.
std::string write_gperf(const GperfFile& file);

}  // namespace tally::gperf
