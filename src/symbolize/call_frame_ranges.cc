#include "symbolize/call_frame_ranges.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "io/byte_cursor.h"
#include "symbolize/elf_image.h"
#include "symbolize/leb128.h"

namespace tally::symbolize {
namespace {

// DW_EH_PE_*: how a pointer is stored (low four bits) and what it is relative to.
constexpr uint8_t kOmit = 0xff;
constexpr uint8_t kFormatMask = 0x0f;
constexpr uint8_t kApplicationMask = 0x70;
constexpr uint8_t kAbsolute = 0x00;
constexpr uint8_t kPcRelative = 0x10;

// What an FDE needs from its CIE.
struct Cie {
  uint8_t pointer_encoding = kAbsolute;  // 'R' augmentation; absolute address-size words else
  bool signal_frame = false;             // 'S'
  unsigned address_size = 8;
};

class FrameReader {
 public:
  explicit FrameReader(const FrameSection& section) : section_(section) {}

  std::vector<CodeRange> read() {
    std::vector<CodeRange> ranges;
    io::ByteCursor in(section_.bytes);
    std::optional<CodeRange> range;
    while (!in.at_end() && next_entry(in, range)) {
      if (range) ranges.push_back(*range);
    }
    std::stable_sort(ranges.begin(), ranges.end(),
                     [](const CodeRange& a, const CodeRange& b) { return a.start < b.start; });
    return ranges;
  }

  // The range of the FDE at `offset`; nullopt when the entry there is a CIE, the
  // terminator or an FDE of no code.
  std::optional<CodeRange> fde_at(size_t offset) {
    if (offset >= section_.bytes.size()) return std::nullopt;
    io::ByteCursor in(section_.bytes.subspan(offset), offset);
    std::optional<CodeRange> range;
    next_entry(in, range);
    return range;
  }

 private:
  // Reads the entry at the cursor and moves past it; `range` is the FDE's, if it is one
  // with code. False at the terminator of .eh_frame.
  bool next_entry(io::ByteCursor& in, std::optional<CodeRange>& range) {
    range.reset();
    const uint64_t record = in.offset();
    unsigned offset_size = 4;
    uint64_t length = in.u32(section_.order, "an entry's length");
    if (length == 0xffffffff) {
      length = in.u64(section_.order, "an entry's 64-bit length");
      offset_size = 8;
    }
    if (length == 0) return section_.kind != FrameSectionKind::eh_frame;  // the terminator
    const uint64_t body = in.offset();
    if (length > in.remaining())
      core::fail_at_byte(record, "an entry of " + std::to_string(length) + " bytes, but only " +
                                     std::to_string(in.remaining()) + " remain in the section");
    io::ByteCursor entry(in.take(static_cast<size_t>(length), "an entry"), body);
    const uint64_t id = entry.word(offset_size, section_.order, "a CIE id or CIE pointer");
    if (is_cie_id(id, offset_size)) {
      cies_.try_emplace(record, parse_cie(entry));
      return true;
    }
    const Cie& cie = cie_at(cie_offset(id, body), record);
    CodeRange fde;
    fde.start = read_pointer(entry, cie.pointer_encoding, cie.address_size, true, "an FDE's start");
    const uint64_t size = read_pointer(entry, cie.pointer_encoding & kFormatMask,
                                       cie.address_size, false, "an FDE's length");
    fde.end = fde.start + size;
    fde.signal_frame = cie.signal_frame;
    // Code the linker discarded keeps an FDE at 0 (in .debug_frame); an empty or
    // wrapping range covers nothing.
    if (fde.start != 0 && fde.end > fde.start) range = fde;
    return true;
  }

 private:
  bool is_cie_id(uint64_t id, unsigned offset_size) const {
    if (section_.kind == FrameSectionKind::eh_frame) return id == 0;
    return id == (offset_size == 4 ? 0xffffffffULL : ~0ULL);
  }

  // .eh_frame: the CIE pointer counts back from its own position; .debug_frame: an offset.
  uint64_t cie_offset(uint64_t id, uint64_t pointer_position) const {
    if (section_.kind == FrameSectionKind::debug_frame) return id;
    return id <= pointer_position ? pointer_position - id : UINT64_MAX;
  }

  const Cie& cie_at(uint64_t offset, uint64_t fde) {
    if (auto found = cies_.find(offset); found != cies_.end()) return found->second;
    if (offset >= section_.bytes.size())
      core::fail_at_byte(fde, "an FDE whose CIE lies inside the section, not at offset " +
                                  std::to_string(offset));
    // A CIE after its FDE, or one the walk has not reached yet.
    io::ByteCursor in(section_.bytes.subspan(static_cast<size_t>(offset)), offset);
    unsigned offset_size = 4;
    uint64_t length = in.u32(section_.order, "a CIE's length");
    if (length == 0xffffffff) {
      length = in.u64(section_.order, "a CIE's 64-bit length");
      offset_size = 8;
    }
    const uint64_t body = in.offset();
    if (length > in.remaining()) core::fail_at_byte(offset, "a CIE that fits in the section");
    io::ByteCursor entry(in.take(static_cast<size_t>(length), "a CIE"), body);
    if (!is_cie_id(entry.word(offset_size, section_.order, "a CIE id"), offset_size))
      core::fail_at_byte(fde, "an FDE whose CIE pointer leads to a CIE, not to another FDE");
    return cies_.try_emplace(offset, parse_cie(entry)).first->second;
  }

  // After the id: version, augmentation, alignment factors, return register, and the
  // augmentation data that says how the FDEs store their addresses.
  Cie parse_cie(io::ByteCursor& in) const {
    Cie cie;
    cie.address_size = section_.address_size;
    const uint64_t version_at = in.offset();
    const uint8_t version = static_cast<uint8_t>(in.word(1, section_.order, "a CIE's version"));
    if (version != 1 && version != 3 && version != 4)
      core::fail_at_byte(version_at, "CIE version 1, 3 or 4, not " + std::to_string(version));
    std::string augmentation;
    for (;;) {
      const char c = static_cast<char>(in.word(1, section_.order, "a CIE's augmentation string"));
      if (c == '\0') break;
      augmentation += c;
    }
    // GCC before 3.0 stored a pointer for "eh"; nothing writes it now.
    if (augmentation.find("eh") != std::string::npos) in.skip(section_.address_size, "the eh data");
    if (version == 4) {
      const uint64_t size_at = in.offset();
      cie.address_size = static_cast<unsigned>(in.word(1, section_.order, "a CIE's address size"));
      if (cie.address_size != 4 && cie.address_size != 8)
        core::fail_at_byte(size_at, "an address size of 4 or 8");
      in.skip(1, "a CIE's segment selector size");
    }
    (void)read_uleb128(in);  // code alignment factor
    (void)read_sleb128(in);  // data alignment factor
    if (version == 1) {
      in.skip(1, "a CIE's return address register");
    } else {
      (void)read_uleb128(in);
    }
    if (augmentation.empty() || augmentation[0] != 'z') return cie;
    const uint64_t data_length = read_uleb128(in);
    if (data_length > in.remaining())
      core::fail_at_byte(in.offset(), "augmentation data that fits in its CIE");
    io::ByteCursor data(in.take(static_cast<size_t>(data_length), "augmentation data"),
                        in.offset() - data_length);
    for (size_t i = 1; i < augmentation.size(); ++i) {
      switch (augmentation[i]) {
        case 'R':
          cie.pointer_encoding = static_cast<uint8_t>(data.word(1, section_.order, "an FDE pointer encoding"));
          break;
        case 'L':
          data.skip(1, "an LSDA encoding");
          break;
        case 'P': {
          const auto encoding = static_cast<uint8_t>(data.word(1, section_.order, "a personality encoding"));
          (void)read_pointer(data, encoding, cie.address_size, false, "a personality routine");
          break;
        }
        case 'S':
          cie.signal_frame = true;
          break;
        default:
          // 'B', 'G' and whatever comes: no data of their own here; the length of the
          // augmentation data already told where the instructions begin.
          break;
      }
    }
    return cie;
  }

  // An encoded pointer at the cursor. `apply`: add what it is relative to (only pc-relative
  // and absolute ones are meaningful for a code address in this section).
  uint64_t read_pointer(io::ByteCursor& in, uint8_t encoding, unsigned address_size, bool apply,
                        const char* what) const {
    if (encoding == kOmit) return 0;
    const uint64_t field = section_.address + in.offset();
    const uint64_t at = in.offset();
    uint64_t value = 0;
    switch (encoding & kFormatMask) {
      case 0x00: value = in.word(address_size, section_.order, what); break;
      case 0x01: value = read_uleb128(in); break;
      case 0x02: value = in.word(2, section_.order, what); break;
      case 0x03: value = in.word(4, section_.order, what); break;
      case 0x04: value = in.word(8, section_.order, what); break;
      case 0x09: value = static_cast<uint64_t>(read_sleb128(in)); break;
      case 0x0a: value = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(in.word(2, section_.order, what)))); break;
      case 0x0b: value = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(in.word(4, section_.order, what)))); break;
      case 0x0c: value = in.word(8, section_.order, what); break;
      default:
        core::fail_at_byte(at, std::string("a known pointer encoding for ") + what + ", not 0x" +
                                   hex(encoding));
    }
    if (apply) {
      switch (encoding & kApplicationMask) {
        case kAbsolute: break;
        case kPcRelative: value += field; break;
        default:
          core::fail_at_byte(at, std::string("an absolute or pc-relative ") + what + ", not encoding 0x" +
                                     hex(encoding));
      }
    }
    if (address_size == 4) value &= 0xffffffffULL;
    return value;
  }

  static std::string hex(uint8_t byte) {
    const char* digits = "0123456789abcdef";
    return {digits[byte >> 4], digits[byte & 15]};
  }

  const FrameSection& section_;
  std::unordered_map<uint64_t, Cie> cies_;  // by the CIE's offset in the section
};

}  // namespace

core::Expected<std::vector<CodeRange>> read_code_ranges(const FrameSection& section) {
  if (section.address_size != 4 && section.address_size != 8)
    return core::Error{"an address size of 4 or 8 bytes", core::ErrorKind::unsupported};
  try {
    return FrameReader(section).read();
  } catch (const core::FormatError& error) {
    return error.located(section.kind == FrameSectionKind::eh_frame ? ".eh_frame" : ".debug_frame");
  }
}

core::Expected<std::vector<CodeRange>> read_code_ranges(const ElfImage& image) {
  std::vector<CodeRange> all;
  for (auto [name, kind] : {std::pair{".eh_frame", FrameSectionKind::eh_frame},
                            std::pair{".debug_frame", FrameSectionKind::debug_frame}}) {
    auto data = image.section_data(name);
    if (!data) continue;
    FrameSection section{data->bytes, data->address, kind, image.address_size(), image.byte_order()};
    auto ranges = read_code_ranges(section);
    if (!ranges) return core::Error{image.path() + ": " + ranges.error().message, ranges.error().kind};
    all.insert(all.end(), ranges->begin(), ranges->end());
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const CodeRange& a, const CodeRange& b) { return a.start < b.start; });
  // The same function described in both sections: once.
  all.erase(std::unique(all.begin(), all.end(),
                        [](const CodeRange& a, const CodeRange& b) {
                          return a.start == b.start && a.end == b.end;
                        }),
            all.end());
  return all;
}

namespace {

// A fixed-size DW_EH_PE format's size (0: not fixed-size), and a value of it.
unsigned fixed_size(uint8_t format) {
  switch (format) {
    case 0x02: case 0x0a: return 2;
    case 0x03: case 0x0b: return 4;
    case 0x04: case 0x0c: return 8;
    default: return 0;
  }
}

uint64_t fixed_value(const uint8_t* bytes, uint8_t format, std::endian order) {
  const unsigned size = fixed_size(format);
  const uint64_t raw = io::ByteCursor::decode(bytes, size, order);
  if (format == 0x0a) return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(raw)));
  if (format == 0x0b) return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(raw)));
  return raw;
}

constexpr uint8_t kDataRelative = 0x30;

}  // namespace

core::Expected<CodeRangeTable> CodeRangeTable::open(const ElfImage& image,
                                                    std::span<const uint8_t> file) {
  CodeRangeTable table;
  auto eh_frame = image.section_data(".eh_frame", file);
  auto header = image.section_data(".eh_frame_hdr", file);
  if (eh_frame && header) {
    table.eh_frame_ = {eh_frame->bytes, eh_frame->address, FrameSectionKind::eh_frame,
                       image.address_size(), image.byte_order()};
    // version 1, then the encodings of: .eh_frame's address, the FDE count, the table.
    const std::span<const uint8_t> bytes = header->bytes;
    if (bytes.size() >= 4 && bytes[0] == 1) {
      const uint8_t pointer_encoding = bytes[1], count_encoding = bytes[2], table_encoding = bytes[3];
      const unsigned pointer_size = fixed_size(pointer_encoding & kFormatMask);
      const unsigned count_size = fixed_size(count_encoding & kFormatMask);
      const unsigned value_size = fixed_size(table_encoding & kFormatMask);
      const uint8_t application = table_encoding & kApplicationMask;
      if (pointer_size != 0 && count_size != 0 && value_size != 0 && count_encoding != kOmit &&
          table_encoding != kOmit && (application == kAbsolute || application == kDataRelative) &&
          4 + pointer_size + count_size <= bytes.size()) {
        const uint64_t count = fixed_value(bytes.data() + 4 + pointer_size, count_encoding & kFormatMask,
                                           image.byte_order());
        const size_t table_start = 4 + pointer_size + count_size;
        const size_t entry_size = 2 * value_size;
        if (count <= (bytes.size() - table_start) / entry_size) {
          table.header_ = {bytes.subspan(table_start, static_cast<size_t>(count) * entry_size),
                           header->address, table_encoding, static_cast<unsigned>(entry_size)};
          table.entries_ = static_cast<size_t>(count);
          return table;
        }
      }
    }
    return core::Error{image.path() + ": .eh_frame_hdr: a version 1 header whose sorted table fits in it"};
  }
  auto ranges = read_code_ranges(image);
  if (!ranges) return ranges.error();
  table.ranges_ = std::move(*ranges);
  return table;
}

uint64_t CodeRangeTable::entry_value(size_t entry, unsigned field) const {
  const unsigned value_size = header_.entry_size / 2;
  const uint8_t* at = header_.table.data() + entry * header_.entry_size + field * value_size;
  uint64_t value = fixed_value(at, header_.encoding & kFormatMask, eh_frame_.order);
  if ((header_.encoding & kApplicationMask) == kDataRelative) value += header_.header_address;
  if (eh_frame_.address_size == 4) value &= 0xffffffffULL;
  return value;
}

std::optional<CodeRange> CodeRangeTable::find(uint64_t address) const {
  if (entries_ == 0) {
    const CodeRange* range = find_code_range(ranges_, address);
    return range ? std::optional(*range) : std::nullopt;
  }
  // The last entry whose function starts at or before the address.
  size_t low = 0, high = entries_;
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    if (entry_value(middle, 0) <= address) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  if (low == 0) return std::nullopt;
  const uint64_t fde = entry_value(low - 1, 1);
  if (fde < eh_frame_.address) return std::nullopt;
  try {
    FrameReader reader(eh_frame_);
    std::optional<CodeRange> range = reader.fde_at(static_cast<size_t>(
        std::min<uint64_t>(fde - eh_frame_.address, eh_frame_.bytes.size())));
    if (range && range->start <= address && address < range->end) return range;
  } catch (const core::FormatError&) {
    // A table entry that leads to no well-formed FDE: the address has no known range.
  }
  return std::nullopt;
}

const CodeRange* find_code_range(const std::vector<CodeRange>& ranges, uint64_t address) {
  auto after = std::upper_bound(ranges.begin(), ranges.end(), address,
                                [](uint64_t a, const CodeRange& r) { return a < r.start; });
  // Overlapping ranges (nested or duplicated FDEs): the nearest start that still holds it.
  for (auto it = after; it != ranges.begin();) {
    --it;
    if (address < it->end) return &*it;
    if (after - it > 8) break;  // a malformed table need not be searched to its start
  }
  return nullptr;
}

}  // namespace tally::symbolize
