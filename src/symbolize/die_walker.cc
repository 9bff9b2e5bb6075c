#include "symbolize/die_walker.h"

#include <dwarf.h>

#include <cstring>

#include "io/byte_cursor.h"
#include "symbolize/leb128.h"

namespace tally::symbolize {

namespace {

constexpr auto kLittle = std::endian::little;
// Abbreviation codes are small and dense in practice; a table beyond this is refused.
constexpr uint64_t kMaxAbbreviationCode = 1 << 20;

struct GiveUp {};

uint64_t uleb(io::ByteCursor& in) { return read_uleb128(in); }

void skip_leb(io::ByteCursor& in) {
  while ((in.word(1, kLittle, "a LEB128") & 0x80) != 0) {
  }
}

void skip_string(io::ByteCursor& in) {
  auto rest = in.rest();
  const void* nul = std::memchr(rest.data(), 0, rest.size());
  if (nul == nullptr) throw GiveUp{};
  in.skip(static_cast<size_t>(static_cast<const uint8_t*>(nul) - rest.data()) + 1, "a string");
}

}  // namespace

std::optional<DieWalker> DieWalker::open(const DieSections& sections, uint64_t unit_offset) {
  if (unit_offset >= sections.info.size()) return std::nullopt;
  try {
    DieWalker walker;
    walker.info_ = sections.info;
    io::ByteCursor in(sections.info.subspan(unit_offset), unit_offset);
    uint64_t length = in.u32(kLittle, "unit length");
    if (length == 0xffffffff) {
      length = in.u64(kLittle, "unit length");
      walker.offset_size_ = 8;
    } else if (length >= 0xfffffff0) {
      return std::nullopt;
    }
    if (length > in.remaining()) return std::nullopt;
    walker.unit_begin_ = unit_offset;
    walker.unit_end_ = in.offset() + length;
    walker.version_ = static_cast<unsigned>(in.word(2, kLittle, "version"));
    uint64_t abbrev_offset = 0;
    if (walker.version_ >= 2 && walker.version_ <= 4) {
      abbrev_offset = in.word(walker.offset_size_, kLittle, "abbreviation offset");
      walker.address_size_ = static_cast<unsigned>(in.word(1, kLittle, "address size"));
    } else if (walker.version_ == 5) {
      auto type = in.word(1, kLittle, "unit type");
      if (type != DW_UT_compile && type != DW_UT_partial) return std::nullopt;
      walker.address_size_ = static_cast<unsigned>(in.word(1, kLittle, "address size"));
      abbrev_offset = in.word(walker.offset_size_, kLittle, "abbreviation offset");
    } else {
      return std::nullopt;
    }
    if (walker.address_size_ != 4 && walker.address_size_ != 8) return std::nullopt;
    if (abbrev_offset >= sections.abbrev.size()) return std::nullopt;

    io::ByteCursor abbrev(sections.abbrev.subspan(abbrev_offset), abbrev_offset);
    for (uint64_t code; (code = uleb(abbrev)) != 0;) {
      // The table is indexed by code: its size stays within what the section can hold.
      if (code > kMaxAbbreviationCode || code > sections.abbrev.size() - abbrev_offset + 64)
        return std::nullopt;
      if (code >= walker.abbreviations_.size()) walker.abbreviations_.resize(code + 1);
      Abbreviation& entry = walker.abbreviations_[code];
      entry.tag = static_cast<unsigned>(uleb(abbrev));
      entry.has_children = abbrev.word(1, kLittle, "children flag") != 0;
      entry.first = static_cast<uint32_t>(walker.attributes_.size());
      for (;;) {
        uint64_t name = uleb(abbrev);
        uint64_t form = uleb(abbrev);
        if (name == 0 && form == 0) break;
        if (form == DW_FORM_implicit_const) skip_leb(abbrev);  // its value is in here
        if (name == DW_AT_low_pc || name == DW_AT_ranges) entry.has_code = true;
        walker.attributes_.push_back({static_cast<uint32_t>(name), static_cast<uint32_t>(form)});
      }
      entry.count = static_cast<uint32_t>(walker.attributes_.size()) - entry.first;
    }
    walker.find_fixed_sizes();
    return walker;
  } catch (const GiveUp&) {
    return std::nullopt;
  } catch (const core::FormatError&) {
    return std::nullopt;
  }
}

void DieWalker::find_fixed_sizes() {
  for (Abbreviation& abbreviation : abbreviations_) {
    uint32_t size = 0;
    abbreviation.fixed = true;
    for (uint32_t i = 0; i < abbreviation.count && abbreviation.fixed; ++i) {
      const Attribute& attribute = attributes_[abbreviation.first + i];
      if (attribute.name == DW_AT_sibling && attribute.form == DW_FORM_ref4)
        abbreviation.sibling_ref4_at = static_cast<int32_t>(size);
      else if (attribute.name == DW_AT_sibling)
        abbreviation.fixed = false;  // other sibling forms take the general path
      switch (attribute.form) {
        case DW_FORM_flag_present: case DW_FORM_implicit_const: break;
        case DW_FORM_addr: size += address_size_; break;
        case DW_FORM_data1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
        case DW_FORM_ref1: size += 1; break;
        case DW_FORM_data2: case DW_FORM_strx2: case DW_FORM_addrx2: case DW_FORM_ref2:
          size += 2; break;
        case DW_FORM_strx3: case DW_FORM_addrx3: size += 3; break;
        case DW_FORM_data4: case DW_FORM_ref_sup4: case DW_FORM_strx4: case DW_FORM_addrx4:
        case DW_FORM_ref4: size += 4; break;
        case DW_FORM_data8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8: case DW_FORM_ref8:
          size += 8; break;
        case DW_FORM_data16: size += 16; break;
        case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset:
        case DW_FORM_strp_sup: case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
          size += offset_size_; break;
        case DW_FORM_ref_addr: size += version_ == 2 ? address_size_ : offset_size_; break;
        default: abbreviation.fixed = false; break;
      }
    }
    abbreviation.fixed_size = size;
  }
}

uint64_t DieWalker::read_entry(uint64_t at, DieEntry& entry, uint64_t& sibling) const {
  if (at < unit_begin_ || at >= unit_end_) throw GiveUp{};
  // The abbreviation code, read here rather than through a cursor: this runs for every
  // DIE the walks pass.
  uint64_t code = 0;
  uint64_t after_code = at;
  for (unsigned shift = 0;; shift += 7) {
    if (after_code >= unit_end_ || shift > 28) throw GiveUp{};
    const uint8_t byte = info_[after_code++];
    code |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  if (code == 0) return 0;
  if (code >= abbreviations_.size() || abbreviations_[code].tag == 0) throw GiveUp{};  // undefined
  const Abbreviation& abbreviation = abbreviations_[code];
  entry = {at, abbreviation.tag, abbreviation.has_children, abbreviation.has_code};
  sibling = 0;
  if (abbreviation.fixed) {
    const uint64_t attributes = after_code;
    if (abbreviation.fixed_size > unit_end_ - attributes) throw GiveUp{};
    if (abbreviation.sibling_ref4_at >= 0) {
      uint64_t value = io::ByteCursor::decode(
          info_.data() + attributes + static_cast<uint32_t>(abbreviation.sibling_ref4_at), 4,
          kLittle);
      if (value >= unit_end_ - unit_begin_ || unit_begin_ + value <= at) throw GiveUp{};
      sibling = unit_begin_ + value;
    }
    return attributes + abbreviation.fixed_size;
  }
  io::ByteCursor in(info_.subspan(after_code, unit_end_ - after_code), after_code);
  for (uint32_t i = 0; i < abbreviation.count; ++i) {
    const Attribute& attribute = attributes_[abbreviation.first + i];
    uint64_t form = attribute.form;
    if (form == DW_FORM_indirect) form = uleb(in);
    uint64_t value = 0;
    switch (form) {
      case DW_FORM_flag_present:
      case DW_FORM_implicit_const: break;
      case DW_FORM_addr: in.skip(address_size_, "an address"); break;
      case DW_FORM_data1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
        in.skip(1, "data"); break;
      case DW_FORM_data2: case DW_FORM_strx2: case DW_FORM_addrx2: in.skip(2, "data"); break;
      case DW_FORM_strx3: case DW_FORM_addrx3: in.skip(3, "data"); break;
      case DW_FORM_data4: case DW_FORM_ref_sup4: case DW_FORM_strx4: case DW_FORM_addrx4:
        in.skip(4, "data"); break;
      case DW_FORM_data8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8: in.skip(8, "data"); break;
      case DW_FORM_data16: in.skip(16, "data"); break;
      case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_strx: case DW_FORM_addrx:
      case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index:
      case DW_FORM_GNU_str_index:
        skip_leb(in); break;
      case DW_FORM_string: skip_string(in); break;
      case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset:
      case DW_FORM_strp_sup: case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
        in.skip(offset_size_, "an offset"); break;
      case DW_FORM_ref_addr: in.skip(version_ == 2 ? address_size_ : offset_size_, "a reference"); break;
      case DW_FORM_block1: in.skip(in.word(1, kLittle, "a length"), "a block"); break;
      case DW_FORM_block2: in.skip(in.word(2, kLittle, "a length"), "a block"); break;
      case DW_FORM_block4: in.skip(in.word(4, kLittle, "a length"), "a block"); break;
      case DW_FORM_block: case DW_FORM_exprloc: in.skip(uleb(in), "a block"); break;
      // Unit-relative references: the only forms a sibling link may take (libdw's rule).
      case DW_FORM_ref1: value = in.word(1, kLittle, "a reference"); break;
      case DW_FORM_ref2: value = in.word(2, kLittle, "a reference"); break;
      case DW_FORM_ref4: value = in.word(4, kLittle, "a reference"); break;
      case DW_FORM_ref8: value = in.word(8, kLittle, "a reference"); break;
      case DW_FORM_ref_udata: value = uleb(in); break;
      default: throw GiveUp{};
    }
    if (attribute.name == DW_AT_sibling) {
      bool unit_relative = form == DW_FORM_ref1 || form == DW_FORM_ref2 || form == DW_FORM_ref4 ||
                           form == DW_FORM_ref8 || form == DW_FORM_ref_udata;
      // It must point past this DIE and into the unit, as libdw checks.
      if (!unit_relative || value >= unit_end_ - unit_begin_ || unit_begin_ + value <= at)
        throw GiveUp{};
      sibling = unit_begin_ + value;
    }
  }
  return in.offset();
}

uint64_t DieWalker::skip_subtree(uint64_t at) const {
  for (unsigned depth = 1; depth > 0;) {
    DieEntry entry;
    uint64_t sibling = 0;
    uint64_t next = read_entry(at, entry, sibling);
    if (next == 0) {  // a null entry closes one level
      --depth;
      ++at;
      continue;
    }
    if (sibling != 0) {
      at = sibling;
    } else {
      at = next;
      if (entry.has_children) ++depth;
    }
  }
  return at;
}

bool DieWalker::children(uint64_t offset, std::vector<DieEntry>& out) const {
  out.clear();
  try {
    DieEntry parent;
    uint64_t sibling = 0;
    uint64_t at = read_entry(offset, parent, sibling);
    if (at == 0 || !parent.has_children) return true;
    for (;;) {
      DieEntry entry;
      uint64_t next = read_entry(at, entry, sibling);
      if (next == 0) return true;
      out.push_back(entry);
      if (sibling != 0) at = sibling;
      else if (entry.has_children) at = skip_subtree(next);
      else at = next;
    }
  } catch (const GiveUp&) {
    return false;
  } catch (const core::FormatError&) {
    return false;
  }
}

}  // namespace tally::symbolize
