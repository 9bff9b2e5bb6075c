// A compile unit's line-number program (.debug_line, DWARF 2 to 5) run for a batch of
// addresses. libdw's dwarf_getsrclines builds a compile unit's whole line table (a heap
// node per row, then a sort): on a C++ program built with -g that is most of the cost of
// symbolizing, and so is its file table (libdw 0.188 reads all the rows for it too). Here
// the file table is read from the header alone, and the program is run once with the
// wanted addresses at hand, each keeping the best row seen so far: no table, no sort.
//
// The answer is libdw's own: for an address, the row that dwarf_getsrc_die returns (of the
// rows at or below it, the one at the highest address; at one address a normal row after
// an end of sequence and a later row after an earlier one; none when that row ends a
// sequence), and the file names as libdw spells them. Anything this reader does not handle
// the way libdw 0.188 does (DW_LNE_define_file, string forms through .debug_str_offsets,
// values libdw rejects, a malformed program) makes it give up, and the caller asks libdw.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tally::symbolize {

// The raw bytes of the sections a line program refers to (empty when absent).
struct LineSections {
  std::span<const uint8_t> line;      // .debug_line
  std::span<const uint8_t> line_str;  // .debug_line_str (DWARF 5)
  std::span<const uint8_t> str;       // .debug_str
};

struct LineRow {
  bool found = false;  // false: no row holds the address (dwarf_getsrc_die's NULL)
  uint32_t file = 0;   // index into LineProgram::files()
  int64_t line = 0;
};

class LineProgram {
 public:
  // Reads the program header at `offset` in .debug_line; nullopt when it is malformed or
  // uses something this reader leaves to libdw. `comp_dir` is the unit's DW_AT_comp_dir
  // (nullptr when absent), `address_size` its address size.
  static std::optional<LineProgram> read(const LineSections& sections, uint64_t offset,
                                         const char* comp_dir, unsigned address_size);

  // File names by index, as dwarf_linesrc and dwarf_filesrc give them.
  const std::vector<std::string>& files() const { return files_; }

  // Runs the program: rows[i] gets the row of addresses[i]. `addresses` must be ascending.
  // False when the program is malformed or leaves the reader's ground (see above).
  bool find_rows(std::span<const uint64_t> addresses, std::span<LineRow> rows) const;

 private:
  LineProgram() = default;

  std::span<const uint8_t> program_;  // the opcodes, up to the unit's end
  uint64_t program_offset_ = 0;        // of program_ in .debug_line
  std::vector<std::string> files_;
  std::vector<uint8_t> standard_lengths_;  // operands of standard opcode i at [i], [0] unused
  unsigned address_size_ = 8;
  unsigned version_ = 0;
  uint8_t minimum_instruction_length_ = 1;
  uint8_t maximum_operations_ = 1;
  bool default_is_stmt_ = true;
  int8_t line_base_ = 0;
  uint8_t line_range_ = 0;
  uint8_t opcode_base_ = 0;
};

}  // namespace tally::symbolize
