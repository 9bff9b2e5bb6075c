#include "symbolize/line_program.h"

#include <dwarf.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "io/byte_cursor.h"
#include "symbolize/leb128.h"

namespace tally::symbolize {

namespace {

constexpr auto kLittle = std::endian::little;

// Thrown when the program leaves the ground this reader covers; caught in this file.
struct GiveUp {};

uint8_t u8(io::ByteCursor& in) { return static_cast<uint8_t>(in.word(1, kLittle, "a byte")); }

uint64_t uleb(io::ByteCursor& in) { return read_uleb128(in); }
int64_t sleb(io::ByteCursor& in) { return read_sleb128(in); }

// A NUL-terminated string starting at `offset` of `section`.
const char* string_at(std::span<const uint8_t> section, uint64_t offset) {
  if (offset >= section.size()) throw GiveUp{};
  const auto* begin = section.data() + offset;
  if (std::memchr(begin, 0, section.size() - offset) == nullptr) throw GiveUp{};
  return reinterpret_cast<const char*>(begin);
}

const char* inline_string(io::ByteCursor& in) {
  auto rest = in.rest();
  const void* nul = std::memchr(rest.data(), 0, rest.size());
  if (nul == nullptr) throw GiveUp{};
  size_t length = static_cast<size_t>(static_cast<const uint8_t*>(nul) - rest.data());
  in.skip(length + 1, "a string");
  return reinterpret_cast<const char*>(rest.data());
}

// One attribute of a DWARF 5 directory or file entry: its string (path forms) or its
// number (index forms); other forms are skipped.
struct FormValue {
  const char* string = nullptr;
  std::optional<uint64_t> number;
};

FormValue read_form(io::ByteCursor& in, uint64_t form, unsigned offset_size,
                    const LineSections& sections) {
  FormValue value;
  switch (form) {
    case DW_FORM_string: value.string = inline_string(in); break;
    case DW_FORM_line_strp:
      value.string = string_at(sections.line_str, in.word(offset_size, kLittle, "an offset"));
      break;
    case DW_FORM_strp:
      value.string = string_at(sections.str, in.word(offset_size, kLittle, "an offset"));
      break;
    case DW_FORM_udata: value.number = uleb(in); break;
    case DW_FORM_data1: value.number = in.word(1, kLittle, "data1"); break;
    case DW_FORM_data2: value.number = in.word(2, kLittle, "data2"); break;
    case DW_FORM_data4: value.number = in.word(4, kLittle, "data4"); break;
    case DW_FORM_data8: value.number = in.word(8, kLittle, "data8"); break;
    case DW_FORM_data16: in.skip(16, "data16"); break;
    case DW_FORM_sdata: sleb(in); break;
    case DW_FORM_block: in.skip(uleb(in), "a block"); break;
    case DW_FORM_block1: in.skip(in.word(1, kLittle, "a length"), "a block"); break;
    case DW_FORM_block2: in.skip(in.word(2, kLittle, "a length"), "a block"); break;
    case DW_FORM_block4: in.skip(in.word(4, kLittle, "a length"), "a block"); break;
    default: throw GiveUp{};  // strx (needs the unit's string offsets), supplementary files
  }
  return value;
}

// libdw's spelling: an absolute name as it is, else the directory, '/', the name (the
// name alone when there is no directory).
std::string join(const char* directory, const char* name) {
  if (name[0] == '/' || directory == nullptr) return name;
  std::string path = directory;
  path += '/';
  path += name;
  return path;
}

// The DWARF 5 entry format: (content type, form) pairs.
std::vector<std::pair<uint64_t, uint64_t>> entry_format(io::ByteCursor& in) {
  std::vector<std::pair<uint64_t, uint64_t>> format(u8(in));
  for (auto& [content, form] : format) {
    content = uleb(in);
    form = uleb(in);
  }
  return format;
}

// A row of the line table as dwarf_getsrc_die orders them: by address, an end of
// sequence before a normal row at one address, then in the order the program made them.
struct Candidate {
  uint64_t address = 0;
  uint64_t order = 0;
  bool normal = false;  // not an end of sequence
  uint32_t file = 0;
  int64_t line = 0;
};

bool less(const Candidate& a, const Candidate& b) {
  if (a.address != b.address) return a.address < b.address;
  if (a.normal != b.normal) return b.normal;
  return a.order < b.order;
}

}  // namespace

std::optional<LineProgram> LineProgram::read(const LineSections& sections, uint64_t offset,
                                             const char* comp_dir, unsigned address_size) {
  if (offset >= sections.line.size() || (address_size != 4 && address_size != 8))
    return std::nullopt;
  try {
    LineProgram program;
    program.address_size_ = address_size;
    io::ByteCursor in(sections.line.subspan(offset), offset);
    uint64_t unit_length = in.u32(kLittle, "unit length");
    unsigned offset_size = 4;
    if (unit_length == 0xffffffff) {
      unit_length = in.u64(kLittle, "unit length");
      offset_size = 8;
    } else if (unit_length >= 0xfffffff0) {
      return std::nullopt;
    }
    if (unit_length > in.remaining()) return std::nullopt;
    io::ByteCursor unit(in.take(unit_length, "the unit"), in.offset());
    program.version_ = static_cast<unsigned>(unit.word(2, kLittle, "version"));
    if (program.version_ < 2 || program.version_ > 5) return std::nullopt;
    if (program.version_ >= 5) {
      if (u8(unit) != address_size || u8(unit) != 0) return std::nullopt;
    }
    uint64_t header_length = unit.word(offset_size, kLittle, "header length");
    if (header_length > unit.remaining()) return std::nullopt;
    const uint64_t program_offset = unit.offset() + header_length;
    io::ByteCursor header(unit.take(header_length, "the header"), unit.offset());
    program.program_ = unit.rest();
    program.program_offset_ = program_offset;

    program.minimum_instruction_length_ = u8(header);
    if (program.version_ >= 4) {
      program.maximum_operations_ = u8(header);
      if (program.maximum_operations_ == 0) return std::nullopt;
    }
    program.default_is_stmt_ = u8(header) != 0;
    program.line_base_ = static_cast<int8_t>(u8(header));
    program.line_range_ = u8(header);
    program.opcode_base_ = u8(header);
    program.standard_lengths_.assign(std::max<size_t>(program.opcode_base_, 1), 0);
    for (size_t i = 1; i < program.opcode_base_; ++i) program.standard_lengths_[i] = u8(header);

    std::vector<const char*> directories;
    program.files_.emplace_back("???");  // index 0 before DWARF 5
    if (program.version_ < 5) {
      directories.push_back(comp_dir);
      for (const char* dir; *(dir = inline_string(header)) != '\0';) directories.push_back(dir);
      for (const char* name; *(name = inline_string(header)) != '\0';) {
        uint64_t dir = uleb(header);
        uleb(header);  // modification time
        uleb(header);  // length
        if (dir >= directories.size()) return std::nullopt;
        program.files_.push_back(join(directories[dir], name));
      }
    } else {
      auto format = entry_format(header);
      uint64_t count = uleb(header);
      if (format.empty() && count != 0) return std::nullopt;
      if (count > header.remaining()) return std::nullopt;
      for (uint64_t n = 0; n < count; ++n) {
        const char* path = nullptr;
        for (auto [content, form] : format) {
          FormValue value = read_form(header, form, offset_size, sections);
          if (content == DW_LNCT_path) path = value.string;
        }
        if (path == nullptr) return std::nullopt;
        directories.push_back(path);
      }
      format = entry_format(header);
      count = uleb(header);
      if (format.empty() && count != 0) return std::nullopt;
      if (count > header.remaining()) return std::nullopt;
      for (uint64_t n = 0; n < count; ++n) {
        const char* name = nullptr;
        std::optional<uint64_t> dir;
        for (auto [content, form] : format) {
          FormValue value = read_form(header, form, offset_size, sections);
          if (content == DW_LNCT_path) name = value.string;
          if (content == DW_LNCT_directory_index) dir = value.number;
        }
        if (name == nullptr || !dir || *dir >= directories.size()) return std::nullopt;
        std::string path = join(directories[*dir], name);
        if (n == 0)
          program.files_[0] = std::move(path);  // entry 0 is index 0 from DWARF 5 on
        else
          program.files_.push_back(std::move(path));
      }
    }
    if (!header.at_end()) return std::nullopt;  // libdw checks the header ends here
    return program;
  } catch (const GiveUp&) {
    return std::nullopt;
  } catch (const core::FormatError&) {
    return std::nullopt;
  }
}

bool LineProgram::find_rows(std::span<const uint64_t> addresses, std::span<LineRow> rows) const {
  const size_t count = addresses.size();
  std::vector<Candidate> best(count);
  std::vector<bool> has_best(count, false);
  // The last group of rows at one address of each run of ascending addresses (a sequence,
  // or a part of one whose addresses go down): it holds every address above it.
  std::vector<Candidate> run_ends;

  auto offer = [&](size_t i, const Candidate& candidate) {
    if (!has_best[i] || less(best[i], candidate)) {
      best[i] = candidate;
      has_best[i] = true;
    }
  };

  bool in_run = false;
  Candidate group;   // the winner among the current run's rows at its highest address
  size_t cursor = 0;  // the first wanted address not below group.address, in this run
  uint64_t order = 0;
  bool last_was_end = false;

  auto add_row = [&](const Candidate& row) {
    last_was_end = !row.normal;
    if (in_run && row.address < group.address) {
      run_ends.push_back(group);
      in_run = false;
    }
    if (!in_run) {
      in_run = true;
      group = row;
      cursor = static_cast<size_t>(
          std::lower_bound(addresses.begin(), addresses.end(), row.address) - addresses.begin());
    } else if (row.address == group.address) {
      if (row.normal || !group.normal) group = row;
    } else {
      // The group holds the addresses up to this row's.
      while (cursor < count && addresses[cursor] < row.address) offer(cursor++, group);
      group = row;
    }
    if (!row.normal) {
      run_ends.push_back(group);
      in_run = false;
    }
  };

  try {
    io::ByteCursor in(program_, program_offset_);
    uint64_t address = 0;
    uint64_t op_index = 0;
    uint32_t file = 1;
    int64_t line = 1;
    uint64_t column = 0;
    uint64_t isa = 0;
    uint64_t discriminator = 0;
    auto reset = [&] {
      address = 0;
      op_index = 0;
      file = 1;
      line = 1;
      column = 0;
      isa = 0;
      discriminator = 0;
    };
    auto advance = [&](uint64_t operations) {
      if (maximum_operations_ == 1) {  // every target but VLIW ones: no division
        address += minimum_instruction_length_ * operations;
        return;
      }
      address += minimum_instruction_length_ * ((op_index + operations) / maximum_operations_);
      op_index = (op_index + operations) % maximum_operations_;
    };
    // What each special opcode adds to the line and to the operation index, worked out
    // once rather than by two divisions per row.
    int line_step[256] = {};
    uint8_t operation_step[256] = {};
    if (line_range_ != 0) {
      for (unsigned opcode = opcode_base_; opcode < 256; ++opcode) {
        const unsigned adjusted = opcode - opcode_base_;
        line_step[opcode] = line_base_ + static_cast<int>(adjusted % line_range_);
        operation_step[opcode] = static_cast<uint8_t>(adjusted / line_range_);
      }
    }
    auto emit = [&](bool end_of_sequence) {
      // Values libdw's row cannot hold make it reject the whole table: leave that to it.
      if (line < INT_MIN || line > INT_MAX || column > 0xffff || op_index > 0xff || isa > 0xff ||
          discriminator > 0xffffff)
        throw GiveUp{};
      add_row({address, order++, !end_of_sequence, file, line});
    };
    auto expect_operands = [&](unsigned opcode, uint8_t operands) {
      if (opcode >= standard_lengths_.size() || standard_lengths_[opcode] != operands)
        throw GiveUp{};
    };

    while (!in.at_end()) {
      const unsigned opcode = u8(in);
      if (opcode >= opcode_base_) {
        if (line_range_ == 0) throw GiveUp{};
        line += line_step[opcode];
        advance(operation_step[opcode]);
        emit(false);
        discriminator = 0;
      } else if (opcode == 0) {
        if (in.remaining() < 2) throw GiveUp{};
        const size_t length = u8(in);  // libdw reads one byte, not a ULEB128
        if (in.remaining() < length) throw GiveUp{};
        const unsigned extended = u8(in);
        switch (extended) {
          case DW_LNE_end_sequence:
            emit(true);
            reset();
            break;
          case DW_LNE_set_address:
            op_index = 0;
            address = in.word(address_size_, kLittle, "an address");
            break;
          case DW_LNE_set_discriminator:
            expect_operands(DW_LNE_set_discriminator, 1);  // libdw's check, as it does it
            discriminator = uleb(in);
            break;
          case DW_LNE_define_file:
            throw GiveUp{};  // adds files while the program runs: left to libdw
          default:
            if (length == 0) throw GiveUp{};
            in.skip(length - 1, "an extended opcode");
            break;
        }
      } else if (opcode <= DW_LNS_set_isa) {
        switch (opcode) {
          case DW_LNS_copy:
            expect_operands(opcode, 0);
            emit(false);
            discriminator = 0;
            break;
          case DW_LNS_advance_pc:
            expect_operands(opcode, 1);
            advance(static_cast<uint32_t>(uleb(in)));  // libdw keeps 32 bits
            break;
          case DW_LNS_advance_line:
            expect_operands(opcode, 1);
            line += static_cast<int32_t>(sleb(in));
            break;
          case DW_LNS_set_file:
            expect_operands(opcode, 1);
            file = static_cast<uint32_t>(uleb(in));
            break;
          case DW_LNS_set_column:
            expect_operands(opcode, 1);
            column = static_cast<uint32_t>(uleb(in));
            break;
          case DW_LNS_negate_stmt:
          case DW_LNS_set_basic_block:
          case DW_LNS_set_prologue_end:
          case DW_LNS_set_epilogue_begin:
            expect_operands(opcode, 0);
            break;
          case DW_LNS_const_add_pc:
            expect_operands(opcode, 0);
            if (line_range_ == 0) throw GiveUp{};
            advance((255u - opcode_base_) / line_range_);
            break;
          case DW_LNS_fixed_advance_pc:
            expect_operands(opcode, 1);
            address += in.word(2, kLittle, "an advance");
            op_index = 0;
            break;
          case DW_LNS_set_isa:
            expect_operands(opcode, 1);
            isa = static_cast<uint32_t>(uleb(in));
            break;
        }
      } else {
        // A standard opcode newer than this reader: skip its ULEB128 operands.
        for (unsigned n = standard_lengths_[opcode]; n > 0; --n) uleb(in);
      }
    }
  } catch (const GiveUp&) {
    return false;
  } catch (const core::FormatError&) {
    return false;
  }
  // libdw counts on the table ending a sequence; leave one that does not to libdw.
  if (order > 0 && !last_was_end) return false;

  std::sort(run_ends.begin(), run_ends.end(), less);
  // libdw marks the last row of its sorted table as an end of sequence, whatever it was.
  const uint64_t last_row = run_ends.empty() ? UINT64_MAX : run_ends.back().order;
  for (size_t i = 0; i < count; ++i) {
    // The best run end at or below the address: the last one sorted at or below it.
    auto after = std::upper_bound(run_ends.begin(), run_ends.end(), addresses[i],
                                  [](uint64_t a, const Candidate& c) { return a < c.address; });
    if (after != run_ends.begin()) offer(i, *(after - 1));
    rows[i] = {};
    if (has_best[i] && best[i].normal && best[i].order != last_row)
      rows[i] = {true, best[i].file, best[i].line};
  }
  return true;
}

}  // namespace tally::symbolize
