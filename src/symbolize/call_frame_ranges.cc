#include "symbolize/call_frame_ranges.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "io/byte_cursor.h"
#include "io/input.h"
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

// Ascending. A large table (libLLVM and libclang-cpp have 95k and 83k FDEs, not in address
// order) by LSD radix sort, 16 bits a pass, skipping a pass whose digit is the same in every
// key (the high bits of the sizes): a third of std::sort's time there.
void sort_keys(std::vector<uint64_t>& keys) {
  if (keys.size() < 4096) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  std::vector<uint64_t> scratch(keys.size());
  std::vector<size_t> count(size_t{1} << 16);
  for (unsigned shift = 0; shift < 64; shift += 16) {
    std::fill(count.begin(), count.end(), 0);
    for (uint64_t k : keys) ++count[(k >> shift) & 0xffff];
    if (count[(keys[0] >> shift) & 0xffff] == keys.size()) continue;
    size_t sum = 0;
    for (size_t& c : count) sum += std::exchange(c, sum);
    for (uint64_t k : keys) scratch[count[(k >> shift) & 0xffff]++] = k;
    keys.swap(scratch);
  }
}

// Sorted by start; a range described twice (in .eh_frame and .debug_frame), once.
void sort_and_unique(std::vector<CodeRange>& ranges) {
  std::stable_sort(ranges.begin(), ranges.end(),
                   [](const CodeRange& a, const CodeRange& b) { return a.start < b.start; });
  ranges.erase(std::unique(ranges.begin(), ranges.end(),
                           [](const CodeRange& a, const CodeRange& b) {
                             return a.start == b.start && a.end == b.end;
                           }),
               ranges.end());
}

// What an FDE needs from its CIE.
struct Cie {
  uint8_t pointer_encoding = kAbsolute;  // 'R' augmentation; absolute address-size words else
  bool signal_frame = false;             // 'S'
  unsigned address_size = 8;
};

class FrameReader {
 public:
  explicit FrameReader(const FrameSection& section) : section_(section) {}

  // Hands every FDE's range to `sink`, in section order; `progress(offset)` is called
  // after each megabyte read.
  template <class Sink, class Progress>
  void read(Sink sink, Progress progress) {
    constexpr uint64_t kReportEvery = uint64_t{1} << 20;
    io::ByteCursor in(section_.bytes);
    std::optional<CodeRange> range;
    uint64_t reported = 0;
    while (!in.at_end() && next_entry(in, range)) {
      if (range) sink(*range);
      if (in.offset() - reported >= kReportEvery) progress(reported = in.offset());
    }
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
    std::vector<CodeRange> ranges;
    FrameReader(section).read([&](const CodeRange& range) { ranges.push_back(range); },
                              [](uint64_t) {});
    sort_and_unique(ranges);
    return ranges;
  } catch (const core::FormatError& error) {
    return error.located(section.kind == FrameSectionKind::eh_frame ? ".eh_frame" : ".debug_frame");
  }
}

namespace {

// Hands the ranges of `image`'s .eh_frame and .debug_frame (a debug file may hold
// .debug_frame only) to `sink`. With `file`, the image's bytes mapped by the caller, a
// section is read from that mapping front to back and each megabyte behind the reader
// goes back to the kernel (libelf's own copies are not given back).
template <class Sink>
core::Status read_image_ranges(const ElfImage& image, const io::Input* file, Sink sink) {
  const std::span<const uint8_t> bytes = file ? file->bytes() : std::span<const uint8_t>();
  for (auto [name, kind] : {std::pair{".eh_frame", FrameSectionKind::eh_frame},
                            std::pair{".debug_frame", FrameSectionKind::debug_frame}}) {
    auto data = image.section_data(name, bytes);
    if (!data) continue;
    const bool mapped = !bytes.empty() && data->bytes.data() >= bytes.data() &&
                        data->bytes.data() + data->bytes.size() <= bytes.data() + bytes.size();
    const uint64_t section_offset = mapped ? static_cast<uint64_t>(data->bytes.data() - bytes.data()) : 0;
    FrameSection section{data->bytes, data->address, kind, image.address_size(), image.byte_order()};
    try {
      FrameReader(section).read(sink, [&](uint64_t done) {
        if (mapped) file->release_before(section_offset + done);
      });
    } catch (const core::FormatError& error) {
      return core::Error{image.path() + ": " + error.located(name).message};
    }
    if (mapped) file->release(section_offset, data->bytes.size());
  }
  return core::ok();
}

}  // namespace

core::Expected<std::vector<CodeRange>> read_code_ranges(const ElfImage& image) {
  std::vector<CodeRange> all;
  auto read = read_image_ranges(image, nullptr, [&](const CodeRange& range) { all.push_back(range); });
  if (!read) return read.error();
  sort_and_unique(all);  // the same function described in both sections: once
  return all;
}

core::Expected<CodeRangeTable> CodeRangeTable::open(const ElfImage& image, const io::Input* file) {
  CodeRangeTable table;
  // Offsets from the lowest executable segment: code more than 4 GB past it is not code
  // tally will be asked about.
  table.base_ = UINT64_MAX;
  for (const LoadSegment& segment : image.load_segments())
    if (segment.executable) table.base_ = std::min(table.base_, segment.vaddr);
  if (table.base_ == UINT64_MAX) table.base_ = 0;
  auto read = read_image_ranges(image, file, [&](const CodeRange& range) {
    if (range.start < table.base_ || range.start - table.base_ > UINT32_MAX) return;
    table.ranges_.push_back({static_cast<uint32_t>(range.start - table.base_),
                             static_cast<uint32_t>(std::min<uint64_t>(range.end - range.start, UINT32_MAX))});
  });
  if (!read) return read.error();
  // By (start, size), as one 64-bit key: equal keys are equal entries, so any sort gives
  // the same table.
  std::vector<uint64_t> keys(table.ranges_.size());
  for (size_t i = 0; i < keys.size(); ++i)
    keys[i] = uint64_t(table.ranges_[i].start) << 32 | table.ranges_[i].size;
  sort_keys(keys);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  table.ranges_.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    table.ranges_[i] = {static_cast<uint32_t>(keys[i] >> 32), static_cast<uint32_t>(keys[i])};
  table.ranges_.shrink_to_fit();
  return table;
}

std::optional<CodeRange> CodeRangeTable::find(uint64_t address) const {
  if (ranges_.empty() || address < base_ || address - base_ > UINT32_MAX) return std::nullopt;
  const auto offset = static_cast<uint32_t>(address - base_);
  auto after = std::upper_bound(ranges_.begin(), ranges_.end(), offset,
                                [](uint32_t a, const Compact& r) { return a < r.start; });
  // Overlapping FDEs (rare): the nearest start that still holds it, a few back at most.
  for (int scanned = 0; after != ranges_.begin() && scanned < 8; ++scanned) {
    --after;
    if (offset - after->start < after->size)
      return CodeRange{base_ + after->start, base_ + after->start + after->size, false};
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
