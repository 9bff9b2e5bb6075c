// Walks the DIEs of one compile unit straight from .debug_info and .debug_abbrev, for the
// two walks that visit many DIEs but need almost nothing from them: finding the functions
// with code among a unit's top-level DIEs, and the inlined calls and blocks directly below
// a function or block. Through libdw each DIE costs an abbreviation lookup under a lock and
// a scan of its attributes; here the unit's abbreviations are read once into a table and a
// DIE is skipped by sizes known from its abbreviation. Only the tag, whether the DIE has
// children, whether its abbreviation carries code addresses (DW_AT_low_pc or DW_AT_ranges)
// and its offset come out: the caller reads the few DIEs it keeps through libdw.
//
// Anything unexpected (a form it cannot size, an offset outside the unit) makes it give up
// (open returns nullopt, children returns false) and the caller walks with libdw.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tally::symbolize {

struct DieSections {
  std::span<const uint8_t> info;    // .debug_info
  std::span<const uint8_t> abbrev;  // .debug_abbrev
};

struct DieEntry {
  uint64_t offset = 0;  // in .debug_info, as dwarf_dieoffset gives it
  unsigned tag = 0;
  bool has_children = false;
  bool has_code = false;  // DW_AT_low_pc or DW_AT_ranges
};

class DieWalker {
 public:
  // The unit whose header starts at `unit_offset` in .debug_info (DWARF 2 to 5, a compile
  // or partial unit, little-endian).
  static std::optional<DieWalker> open(const DieSections& sections, uint64_t unit_offset);

  // The children of the DIE at `offset` (in DIE order) into `out`; false when the walker
  // gave up.
  bool children(uint64_t offset, std::vector<DieEntry>& out) const;

 private:
  struct Attribute {
    uint32_t name = 0;
    uint32_t form = 0;
  };
  struct Abbreviation {
    unsigned tag = 0;
    bool has_children = false;
    bool has_code = false;
    uint32_t first = 0, count = 0;  // in attributes_
    // When every attribute has a fixed size: their total, and where a DW_AT_sibling in
    // ref4 sits (-1: none), so that such a DIE is skipped without reading it.
    bool fixed = false;
    uint32_t fixed_size = 0;
    int32_t sibling_ref4_at = -1;
  };
  DieWalker() = default;
  void find_fixed_sizes();
  // Reads the DIE at `at`; returns the offset after it and its attributes, or 0 at a null
  // entry (the entry is then not filled). Throws on malformed input.
  uint64_t read_entry(uint64_t at, DieEntry& entry, uint64_t& sibling) const;
  uint64_t skip_subtree(uint64_t at) const;  // from the first child: past the null entry

  std::span<const uint8_t> info_;
  uint64_t unit_begin_ = 0, unit_end_ = 0;  // the unit's bytes in .debug_info
  unsigned version_ = 0;
  unsigned offset_size_ = 4;
  unsigned address_size_ = 8;
  std::vector<Abbreviation> abbreviations_;  // by code
  std::vector<Attribute> attributes_;
};

}  // namespace tally::symbolize
