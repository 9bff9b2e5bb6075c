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

namespace tally::io {
class Input;
}

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

// The function ranges of one ELF file for the symbolizer, kept compact (8 bytes a
// function: libLLVM has 95k). Read once, front to back: with `file` (the image's bytes
// mapped by the caller) each megabyte read is given back to the kernel as the reading
// goes on, so that a 5 MB .eh_frame never sits in the resident set; random lookups over
// the mapped section (through .eh_frame_hdr's table) touched nearly all of it.
class CodeRangeTable {
 public:
  // An empty table when the file has no call-frame information; an error naming the
  // section and byte when what it has is malformed.
  static core::Expected<CodeRangeTable> open(const ElfImage& image, const io::Input* file = nullptr);
  CodeRangeTable() = default;

  std::optional<CodeRange> find(uint64_t address) const;
  bool empty() const { return ranges_.empty(); }
  size_t size() const { return ranges_.size(); }

 private:
  struct Compact {
    uint32_t start = 0;  // from base_
    uint32_t size = 0;
  };
  uint64_t base_ = 0;
  std::vector<Compact> ranges_;  // by start
};

}  // namespace tally::symbolize
