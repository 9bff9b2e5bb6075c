// Function boundaries from call-frame information. Every x86-64 object carries .eh_frame
// (its unwinder needs it, so it survives stripping), and some also .debug_frame: each FDE
// (frame description entry) covers one function's code, [start, end). Where no symbol
// covers an address (Debian strips its libraries to .dynsym), the FDE still tells which
// function it belongs to and where that function starts.
//
// The reader takes the section's bytes as untrusted input: every length and pointer is
// checked against the section, and a malformed entry ends the reading with the byte offset
// and what was expected.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/error.h"

namespace tally::symbolize {

struct CodeRange {
  uint64_t start = 0;  // link-time address
  uint64_t end = 0;    // one past the last byte
  bool signal_frame = false;  // its CIE has the 'S' augmentation (a signal trampoline)
};

enum class FrameSectionKind { eh_frame, debug_frame };

struct FrameSection {
  std::span<const uint8_t> bytes;
  uint64_t address = 0;  // the section's link-time address (for pc-relative pointers)
  FrameSectionKind kind = FrameSectionKind::eh_frame;
  unsigned address_size = 8;  // 4 or 8: ELFCLASS32 or ELFCLASS64
  std::endian order = std::endian::little;
};

// Every FDE's range with a non-empty extent, sorted by start; where ranges overlap (FDEs of
// code the linker discarded keep their start at 0 and are dropped; anything else overlapping
// is kept in start order). Fails with "byte N: what was expected" on a malformed section.
core::Expected<std::vector<CodeRange>> read_code_ranges(const FrameSection& section);

class ElfImage;

// The ranges of an ELF file's .eh_frame and .debug_frame together (a debug file may hold
// .debug_frame only, the binary .eh_frame), read whole. A malformed section is an error
// naming it; a file with neither gives no ranges.
core::Expected<std::vector<CodeRange>> read_code_ranges(const ElfImage& image);

// The range holding `address` among sorted `ranges`, or null.
const CodeRange* find_code_range(const std::vector<CodeRange>& ranges, uint64_t address);

// The function range of any address of one ELF file, for the symbolizer. With
// .eh_frame_hdr (every linked x86-64 object has one) it reads nothing up front: a lookup
// is a binary search of the header's sorted table of FDE starts, then the one FDE found is
// read for its length. Without it, the sections are read whole once. The table and
// sections are the image's (mapped), which must outlive this. Lookups only read: one
// table may serve many threads.
class CodeRangeTable {
 public:
  // An empty table when the file has no call-frame information; an error when what it has
  // is malformed (the header's table cannot be searched, or a section cannot be read).
  // `file`: the image's bytes mapped by the caller (see ElfImage::section_data).
  static core::Expected<CodeRangeTable> open(const ElfImage& image, std::span<const uint8_t> file = {});
  CodeRangeTable() = default;

  std::optional<CodeRange> find(uint64_t address) const;
  bool empty() const { return ranges_.empty() && entries_ == 0; }

 private:
  struct HeaderTable {
    std::span<const uint8_t> table;  // the (initial location, FDE address) pairs
    uint64_t header_address = 0;     // datarel base
    uint8_t encoding = 0;
    unsigned entry_size = 0;
  };
  uint64_t entry_value(size_t entry, unsigned field) const;

  FrameSection eh_frame_;
  HeaderTable header_;
  size_t entries_ = 0;
  std::vector<CodeRange> ranges_;  // without a searchable header: every range
};

}  // namespace tally::symbolize
