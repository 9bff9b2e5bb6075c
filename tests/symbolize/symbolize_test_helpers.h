// Test-side helpers for the symbolize tests: a binary's functions from its ELF symbol
// table, and a profile that maps a binary the way the loader would.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/profile.h"
#include "symbolize/symbol_map.h"

namespace tally::test {

struct ElfFunction {
  std::string name;  // as in .symtab
  uint64_t address = 0;
  uint64_t size = 0;
};
// The defined, sized STT_FUNC symbols of `path`'s .symtab (read with libelf).
std::vector<ElfFunction> elf_functions(const std::string& path);

// A profile with one mapping of `path`'s executable PT_LOAD segment at `base` + its
// link-time address (as the loader maps a PIE or shared library), and one location per
// link-time address in `addresses` (shifted by `base`).
core::Profile profile_mapping(const std::string& path, uint64_t base,
                              const std::vector<uint64_t>& addresses,
                              const std::string& build_id = "");

// The frames of one location, innermost first, as "function|file|line".
std::vector<std::string> location_frames(const core::Profile& profile, core::LocationId id);

// The separate debug file of `binary` under /usr/lib/debug/.build-id (libc6-dbg's for libc,
// whose DWARF sections are SHF_COMPRESSED), or "" when it is not installed.
std::string separate_debug_file(const std::string& binary);

// Expects `actual` to give each of `addresses` the frames (function, file, line) that
// `expected` gives; returns how many of those frames have a line (DWARF was read).
size_t expect_same_frames(symbolize::SymbolMap& expected, symbolize::SymbolMap& actual,
                          const std::vector<uint64_t>& addresses);

}  // namespace tally::test
