// Function ranges from call-frame information (.eh_frame, .debug_frame): every FDE of real
// libraries of this machine, against readelf's own reading of the same sections (binutils,
// the reference); hand-built sections for the encodings; and truncated and corrupted
// sections, which must give an error or ranges, never a crash.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "io/input.h"
#include "support/test_support.h"
#include "symbolize/call_frame_ranges.h"
#include "symbolize/elf_image.h"

namespace tally::symbolize {
namespace {

using Range = std::pair<uint64_t, uint64_t>;

// "pc=START..END" of every FDE readelf prints, without the empty and discarded ones.
std::set<Range> readelf_ranges(const std::string& path) {
  const std::string readelf = test::find_program("readelf");
  EXPECT_FALSE(readelf.empty()) << "readelf (binutils) is needed";
  // readelf exits 1 on libc.so.6 ("Unable to find program interpreter name", a note about
  // its PT_INTERP) after printing every frame: the FDE count below is what tells.
  test::RunResult r = test::run({readelf, "--debug-dump=frames", path});
  EXPECT_NE(r.out.find("Contents of the "), std::string::npos) << r.err;
  std::set<Range> ranges;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    size_t pc = line.find(" FDE ");
    if (pc == std::string::npos || (pc = line.find("pc=", pc)) == std::string::npos) continue;
    size_t dots = line.find("..", pc);
    uint64_t start = std::stoull(line.substr(pc + 3, dots - pc - 3), nullptr, 16);
    uint64_t end = std::stoull(line.substr(dots + 2), nullptr, 16);
    if (start != 0 && end > start) ranges.insert({start, end});
  }
  return ranges;
}

std::set<Range> tally_ranges(const std::string& path) {
  auto image = ElfImage::open(path);
  EXPECT_NE(image, nullptr) << path;
  if (!image) return {};
  auto ranges = read_code_ranges(*image);
  EXPECT_TRUE(ranges.has_value()) << ranges.error().message;
  std::set<Range> out;
  if (ranges) {
    for (const CodeRange& r : *ranges) out.insert({r.start, r.end});
  }
  return out;
}

TEST(CallFrameRanges, EveryFdeOfRealLibrariesAsReadelfReadsIt) {
  for (const char* library : {"/lib/x86_64-linux-gnu/liblzma.so.5", "/lib/x86_64-linux-gnu/libc.so.6",
                              "/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/bin/xz"}) {
    SCOPED_TRACE(library);
    std::set<Range> expected = readelf_ranges(library);
    ASSERT_GT(expected.size(), 20u) << "readelf found too few FDEs to compare with";
    EXPECT_EQ(tally_ranges(library), expected);
  }
}

// The compact table the symbolizer keeps finds the same range for every address as the
// whole section's ranges: each FDE's first and last byte, the byte after it, and addresses
// between; read through libelf, and read from a mapping whose pages it gives back as it goes.
// libstdc++ has more than 4096 FDEs: its table is radix-sorted, the others' by std::sort.
TEST(CallFrameRanges, CompactTableLookupsAgreeWithTheWholeSection) {
  for (const char* library : {"/lib/x86_64-linux-gnu/liblzma.so.5", "/lib/x86_64-linux-gnu/libc.so.6",
                              "/usr/bin/xz", "/lib/x86_64-linux-gnu/libstdc++.so.6"}) {
    SCOPED_TRACE(library);
    auto image = ElfImage::open(library);
    ASSERT_NE(image, nullptr);
    auto all = read_code_ranges(*image);
    ASSERT_TRUE(all.has_value()) << all.error().message;
    auto mapped = io::Input::open(library);
    ASSERT_TRUE(mapped.has_value());
    for (const io::Input* file : {static_cast<const io::Input*>(nullptr), static_cast<const io::Input*>(&*mapped)}) {
      auto table = CodeRangeTable::open(*image, file);
      ASSERT_TRUE(table.has_value()) << table.error().message;
      ASSERT_EQ(table->size(), all->size());
      size_t checked = 0;
      auto same = [&](uint64_t address) {
        const CodeRange* expected = find_code_range(*all, address);
        std::optional<CodeRange> found = table->find(address);
        ASSERT_EQ(found.has_value(), expected != nullptr) << std::hex << address;
        if (found) {
          EXPECT_EQ(found->start, expected->start) << std::hex << address;
          EXPECT_EQ(found->end, expected->end) << std::hex << address;
        }
        ++checked;
      };
      for (const CodeRange& range : *all) {
        same(range.start);
        same(range.end - 1);
        same(range.end);
        same(range.start + (range.end - range.start) / 2);
      }
      same(0);
      same(all->front().start - 1);
      EXPECT_GT(checked, 80u);
    }
  }
}

// Built without unwind tables, gcc describes the frames in .debug_frame instead (a
// 32-bit DWARF section whose FDEs point at their CIE by offset).
TEST(CallFrameRanges, DebugFrameOfAProgramBuiltWithoutUnwindTables) {
  test::TempDir dir;
  const std::string source = dir.file("frames.c");
  test::write_bytes(source,
                    "int leaf(int x) { return x * 3 + 1; }\n"
                    "int middle(int x) { int s = 0; for (int i = 0; i < x; ++i) s += leaf(i); return s; }\n"
                    "int main(int argc, char** argv) { (void)argv; return middle(argc) & 1; }\n");
  const std::string program = dir.file("frames");
  test::RunResult cc = test::run({test::find_program("cc"), "-O1", "-g", "-fno-asynchronous-unwind-tables",
                                  "-fno-unwind-tables", "-fno-inline", "-o", program, source});
  ASSERT_EQ(cc.exit_code, 0) << cc.err;
  auto image = ElfImage::open(program);
  ASSERT_NE(image, nullptr);
  ASSERT_TRUE(image->section_data(".debug_frame").has_value()) << "gcc wrote no .debug_frame";
  std::set<Range> expected = readelf_ranges(program);
  EXPECT_GE(expected.size(), 3u);  // leaf, middle, main
  EXPECT_EQ(tally_ranges(program), expected);
}

// A little-endian .eh_frame written by hand: one CIE "zRS" (pc-relative sdata4 pointers,
// signal frame) and one FDE.
std::vector<uint8_t> handmade_eh_frame(uint8_t pointer_encoding) {
  std::vector<uint8_t> bytes;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  // CIE at 0: length, id 0, version 1, "zRS", code align 1, data align -8, ra 16,
  // augmentation data length 1, encoding; padded to 4-byte alignment.
  std::vector<uint8_t> cie = {0, 0, 0, 0, 1, 'z', 'R', 'S', 0, 1, 0x78, 16, 1, pointer_encoding, 0, 0};
  u32(static_cast<uint32_t>(cie.size()));
  bytes.insert(bytes.end(), cie.begin(), cie.end());
  // FDE: length, CIE pointer (back to 0 from its own offset), pc_begin, pc_range, aug len 0.
  const size_t fde = bytes.size();
  u32(16);
  u32(static_cast<uint32_t>(fde + 4));
  u32(0x100);  // pc-relative: the field's address + 0x100
  u32(0x40);
  bytes.push_back(0);
  bytes.push_back(0);
  bytes.push_back(0);
  bytes.push_back(0);
  u32(0);  // terminator
  return bytes;
}

TEST(CallFrameRanges, PcRelativePointersAndTheSignalFrameMark) {
  std::vector<uint8_t> bytes = handmade_eh_frame(0x1b);  // DW_EH_PE_pcrel | sdata4
  FrameSection section{bytes, 0x5000, FrameSectionKind::eh_frame, 8, std::endian::little};
  auto ranges = read_code_ranges(section);
  ASSERT_TRUE(ranges.has_value()) << ranges.error().message;
  ASSERT_EQ(ranges->size(), 1u);
  // pc_begin is the 9th byte of the FDE (after length and CIE pointer): 0x5000 + 20 + 8.
  const uint64_t field = 0x5000 + 20 + 8;
  EXPECT_EQ((*ranges)[0].start, field + 0x100);
  EXPECT_EQ((*ranges)[0].end, field + 0x140);
  EXPECT_TRUE((*ranges)[0].signal_frame);
  EXPECT_EQ(find_code_range(*ranges, field + 0x100), &(*ranges)[0]);
  EXPECT_EQ(find_code_range(*ranges, field + 0x13f), &(*ranges)[0]);
  EXPECT_EQ(find_code_range(*ranges, field + 0x140), nullptr);
  EXPECT_EQ(find_code_range(*ranges, field + 0xff), nullptr);
}

TEST(CallFrameRanges, UnknownEncodingIsAnErrorWithItsByteOffset) {
  std::vector<uint8_t> bytes = handmade_eh_frame(0x0e);  // no such format
  FrameSection section{bytes, 0, FrameSectionKind::eh_frame, 8, std::endian::little};
  auto ranges = read_code_ranges(section);
  ASSERT_FALSE(ranges.has_value());
  EXPECT_EQ(ranges.error().message,
            ".eh_frame: byte 28: a known pointer encoding for an FDE's start, not 0x0e");
}

TEST(CallFrameRanges, TruncatedAndCorruptedSectionsGiveAnErrorOrRanges) {
  auto image = ElfImage::open("/lib/x86_64-linux-gnu/liblzma.so.5");
  ASSERT_NE(image, nullptr);
  auto data = image->section_data(".eh_frame");
  ASSERT_TRUE(data.has_value());
  const std::vector<uint8_t> original(data->bytes.begin(), data->bytes.end());
  size_t errors = 0;
  for (size_t cut = 0; cut < original.size(); cut += 7) {
    std::vector<uint8_t> bytes(original.begin(), original.begin() + static_cast<long>(cut));
    FrameSection section{bytes, data->address, FrameSectionKind::eh_frame, 8, std::endian::little};
    auto ranges = read_code_ranges(section);
    if (!ranges) {
      ++errors;
      EXPECT_NE(ranges.error().message.find(".eh_frame: byte "), std::string::npos)
          << ranges.error().message;
    }
  }
  EXPECT_GT(errors, 0u);  // most cuts fall inside an entry
  uint64_t state = 12345;
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> bytes = original;
    for (int flips = 0; flips < 4; ++flips) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      bytes[(state >> 33) % bytes.size()] ^= static_cast<uint8_t>(1u << ((state >> 20) & 7));
    }
    FrameSection section{bytes, data->address, FrameSectionKind::eh_frame, 8, std::endian::little};
    auto ranges = read_code_ranges(section);
    if (ranges) {
      for (const CodeRange& r : *ranges) EXPECT_LT(r.start, r.end);
    }
  }
}

}  // namespace
}  // namespace tally::symbolize
