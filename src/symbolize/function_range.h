// The functions of one ELF file with their address ranges, and their code: what a
// disassembly needs. Ranges are found as pprof's -disasm finds them (it runs `nm -n`):
// every defined symbol of the symbol table, grouped by address, each group running to
// the next symbol's address (so alignment padding belongs to the function before it), but
// never past the end of its section. The table is the binary's .symtab, else the debug
// file's, else .dynsym; without any, the DWARF subprograms.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "symbolize/elf_image.h"
#include "symbolize/find_binary.h"

namespace tally::symbolize {

struct SymbolRange {
  uint64_t start = 0;  // link-time address
  uint64_t end = 0;    // one past the last byte
  // The symbols at `start` as the binary spells them (mangled), by name.
  std::vector<std::string> names;
};

class FunctionRanges {
 public:
  // Reads the symbols of the binary (and its debug file) that find_binary() found; null
  // when neither file can be opened.
  static std::unique_ptr<FunctionRanges> load(const FoundBinary& found);

  // By start address.
  const std::vector<SymbolRange>& symbols() const { return symbols_; }
  // The range holding a link-time address, or null.
  const SymbolRange* containing(uint64_t address) const;

  // The bytes of [start, end) from the binary's loaded sections; nullopt when the binary
  // (not just a debug file) is not there or does not hold those addresses.
  std::optional<std::vector<uint8_t>> code(uint64_t start, uint64_t end) const;
  // The ELF machine (EM_X86_64, EM_AARCH64...).
  int machine() const { return machine_; }
  // For turning a mapping's runtime addresses into link-time ones (link_time_address()).
  const std::vector<LoadSegment>& segments() const { return segments_; }
  bool is_exec() const { return is_exec_; }
  const std::string& path() const { return path_; }

 private:
  std::unique_ptr<ElfImage> binary_;
  std::vector<SymbolRange> symbols_;
  std::vector<LoadSegment> segments_;
  bool is_exec_ = false;
  int machine_ = 0;
  std::string path_;
};

}  // namespace tally::symbolize
