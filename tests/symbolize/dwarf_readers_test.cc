// tally's own DWARF readers against libdw on programs built here by g++ and clang++ in
// several DWARF versions. LineProgram (.debug_line): for every byte address around every
// compile unit's code, the row it finds must be the one dwarf_getsrc_die returns (file and
// line, or none), and its file table must be dwarf_getsrcfiles' name for name. DieWalker
// (.debug_info): the children of every DIE, in order, with libdw's tag, children flag and
// code attributes. Then truncated and corrupted input: a clean refusal, never a crash (the
// ASan build checks).
#include <gtest/gtest.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "symbolize/die_walker.h"
#include "symbolize/line_program.h"

namespace tally::test {
namespace {

using symbolize::DieEntry;
using symbolize::DieSections;
using symbolize::DieWalker;
using symbolize::LineProgram;
using symbolize::LineRow;
using symbolize::LineSections;

// Two files of code (a header's inline functions land in the program's line table
// under the header's name), templates, a lambda and a few functions to inline.
constexpr const char* kHeader = R"(
#pragma once
#include <vector>
template <class T> inline T sum(const std::vector<T>& v) {
  T s{};
  for (const T& x : v) s += x * x;
  return s;
}
inline int clamp_to(int x, int hi) { return x > hi ? hi : x; }
)";
constexpr const char* kProgram = R"(
#include <algorithm>
#include <string>
#include "work.h"
__attribute__((noinline)) static int shortest(std::vector<std::string>& words) {
  std::sort(words.begin(), words.end(),
            [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  return words.empty() ? 0 : static_cast<int>(words.front().size());
}
int main(int argc, char** argv) {
  std::vector<std::string> words(argv, argv + argc);
  std::vector<long> values(static_cast<size_t>(argc), 7);
  return clamp_to(shortest(words) + static_cast<int>(sum(values)), 100);
}
)";

class Dwarf {
 public:
  explicit Dwarf(const std::string& path) : fd_(open(path.c_str(), O_RDONLY)) {
    if (fd_ >= 0) dwarf_ = dwarf_begin(fd_, DWARF_C_READ);
  }
  ~Dwarf() {
    if (dwarf_ != nullptr) dwarf_end(dwarf_);
    if (fd_ >= 0) close(fd_);
  }
  ::Dwarf* get() const { return dwarf_; }

  // The sections as libdw holds them (decompressed if they were compressed).
  // The sections as libdw holds them (inflated if they were compressed).
  struct Sections {
    LineSections lines;
    DieSections dies;
  };
  Sections sections() const {
    Sections found;
    Elf* elf = dwarf_getelf(dwarf_);
    size_t names = 0;
    elf_getshdrstrndx(elf, &names);
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr header;
      gelf_getshdr(scn, &header);
      const char* name = elf_strptr(elf, names, header.sh_name);
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (name == nullptr || data == nullptr || data->d_buf == nullptr) continue;
      std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data->d_buf), data->d_size);
      if (std::strcmp(name, ".debug_line") == 0) found.lines.line = bytes;
      if (std::strcmp(name, ".debug_line_str") == 0) found.lines.line_str = bytes;
      if (std::strcmp(name, ".debug_str") == 0) found.lines.str = bytes;
      if (std::strcmp(name, ".debug_info") == 0) found.dies.info = bytes;
      if (std::strcmp(name, ".debug_abbrev") == 0) found.dies.abbrev = bytes;
    }
    return found;
  }

 private:
  int fd_;
  ::Dwarf* dwarf_ = nullptr;
};

struct Unit {
  Dwarf_Die die;
  uint64_t line_offset = 0;
  const char* comp_dir = nullptr;
  uint8_t address_size = 8;
};

std::vector<Unit> units_with_lines(::Dwarf* dwarf) {
  std::vector<Unit> units;
  Dwarf_CU* cu = nullptr;
  Dwarf_CU* next = nullptr;
  Dwarf_Half version = 0;
  uint8_t type = 0;
  Dwarf_Die die;
  while (dwarf_get_units(dwarf, cu, &next, &version, &type, &die, nullptr) == 0) {
    cu = next;
    Unit unit{die};
    Dwarf_Attribute attribute;
    Dwarf_Word offset = 0;
    if (dwarf_formudata(dwarf_attr(&die, DW_AT_stmt_list, &attribute), &offset) != 0) continue;
    unit.line_offset = offset;
    unit.comp_dir = dwarf_formstring(dwarf_attr(&die, DW_AT_comp_dir, &attribute));
    Dwarf_Die cu_die;
    dwarf_diecu(&die, &cu_die, &unit.address_size, nullptr);
    units.push_back(unit);
  }
  return units;
}

std::string build(const TempDir& dir, const std::vector<std::string>& command) {
  write_bytes(dir.file("work.h"), kHeader);
  write_bytes(dir.file("program.cc"), kProgram);
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), {"-o", dir.file("program"), dir.file("program.cc")});
  RunResult built = run(argv);
  EXPECT_EQ(built.exit_code, 0) << built.err;
  return dir.file("program");
}

// Counts in `found` the addresses that had a row.
void compare_with_libdw(const std::string& binary, size_t& found) {
  Dwarf dwarf(binary);
  ASSERT_NE(dwarf.get(), nullptr) << binary;
  const LineSections sections = dwarf.sections().lines;
  size_t units = 0;
  for (Unit& unit : units_with_lines(dwarf.get())) {
    auto program = LineProgram::read(sections, unit.line_offset, unit.comp_dir, unit.address_size);
    ASSERT_TRUE(program.has_value()) << binary << ": unit at line offset " << unit.line_offset;
    ++units;
    Dwarf_Files* files = nullptr;
    size_t file_count = 0;
    ASSERT_EQ(dwarf_getsrcfiles(&unit.die, &files, &file_count), 0);
    ASSERT_EQ(program->files().size(), file_count);
    for (size_t i = 0; i < file_count; ++i)
      EXPECT_EQ(program->files()[i], dwarf_filesrc(files, i, nullptr, nullptr)) << "file " << i;

    std::vector<uint64_t> addresses;
    Dwarf_Addr base = 0, low = 0, high = 0;
    for (ptrdiff_t offset = 0; (offset = dwarf_ranges(&unit.die, offset, &base, &low, &high)) > 0;)
      for (uint64_t a = low >= 2 ? low - 2 : 0; a < high + 2; ++a) addresses.push_back(a);
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    std::vector<LineRow> rows(addresses.size());
    ASSERT_TRUE(program->find_rows(addresses, rows));
    for (size_t i = 0; i < addresses.size(); ++i) {
      Dwarf_Line* line = dwarf_getsrc_die(&unit.die, addresses[i]);
      ASSERT_EQ(rows[i].found, line != nullptr) << std::hex << addresses[i];
      if (line == nullptr) continue;
      ++found;
      int number = 0;
      dwarf_lineno(line, &number);
      const char* file = dwarf_linesrc(line, nullptr, nullptr);
      ASSERT_LT(rows[i].file, program->files().size());
      EXPECT_EQ(program->files()[rows[i].file], file ? file : "") << std::hex << addresses[i];
      EXPECT_EQ(rows[i].line, number) << std::hex << addresses[i];
    }
  }
  EXPECT_GT(units, 0u) << binary;
}

struct Build {
  const char* compiler;
  std::vector<std::string> flags;
};

class DwarfReadersTest : public ::testing::TestWithParam<Build> {};

TEST_P(DwarfReadersTest, SameRowsAndFilesAsLibdw) {
  std::string compiler = find_program(GetParam().compiler);
  TALLY_REQUIRE_PEER(compiler, GetParam().compiler);
  TempDir dir;
  std::vector<std::string> command{compiler};
  command.insert(command.end(), GetParam().flags.begin(), GetParam().flags.end());
  std::string binary = build(dir, command);
  size_t found = 0;
  compare_with_libdw(binary, found);
  EXPECT_GT(found, 1000u);
}

// Every DIE's children through DieWalker and through libdw; returns the DIEs compared.
size_t compare_children(const DieWalker& walker, Dwarf_Die* parent) {
  std::vector<DieEntry> entries;
  EXPECT_TRUE(walker.children(dwarf_dieoffset(parent), entries));
  size_t compared = 0;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) {
    EXPECT_TRUE(entries.empty());
    return 0;
  }
  size_t i = 0;
  do {
    if (i >= entries.size()) {
      ADD_FAILURE() << "DieWalker lists fewer children of " << dwarf_dieoffset(parent);
      return compared;
    }
    const DieEntry& entry = entries[i++];
    EXPECT_EQ(entry.offset, dwarf_dieoffset(&child));
    EXPECT_EQ(entry.tag, static_cast<unsigned>(dwarf_tag(&child)));
    EXPECT_EQ(entry.has_children, dwarf_haschildren(&child) != 0);
    EXPECT_EQ(entry.has_code,
              dwarf_hasattr(&child, DW_AT_low_pc) || dwarf_hasattr(&child, DW_AT_ranges));
    ++compared;
    if (dwarf_haschildren(&child)) compared += compare_children(walker, &child);
  } while (dwarf_siblingof(&child, &child) == 0);
  EXPECT_EQ(i, entries.size()) << "DieWalker lists more children of " << dwarf_dieoffset(parent);
  return compared;
}

TEST_P(DwarfReadersTest, WalkerSeesLibdwsDies) {
  std::string compiler = find_program(GetParam().compiler);
  TALLY_REQUIRE_PEER(compiler, GetParam().compiler);
  TempDir dir;
  std::vector<std::string> command{compiler};
  command.insert(command.end(), GetParam().flags.begin(), GetParam().flags.end());
  Dwarf dwarf(build(dir, command));
  ASSERT_NE(dwarf.get(), nullptr);
  const DieSections sections = dwarf.sections().dies;
  size_t compared = 0;
  for (Unit& unit : units_with_lines(dwarf.get())) {
    auto walker =
        DieWalker::open(sections, dwarf_dieoffset(&unit.die) - dwarf_cuoffset(&unit.die));
    ASSERT_TRUE(walker.has_value());
    compared += compare_children(*walker, &unit.die);
  }
  EXPECT_GT(compared, 1000u);
}

INSTANTIATE_TEST_SUITE_P(
    Compilers, DwarfReadersTest,
    ::testing::Values(Build{"g++", {"-O2", "-g"}}, Build{"g++", {"-O2", "-gdwarf-4"}},
                      Build{"g++", {"-O0", "-g", "-ffunction-sections"}},
                      Build{"g++", {"-O2", "-gdwarf-2", "-gstrict-dwarf"}},
                      Build{"clang++-14", {"-O2", "-g"}},
                      Build{"clang++-14", {"-O1", "-gdwarf-4"}}),
    [](const auto& param_info) {
      std::string name = std::string(param_info.param.compiler) + "_";
      for (const auto& flag : param_info.param.flags) name += flag.substr(1);
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

// Every truncation of a real program and bytes set to extreme values: the reader gives
// up or answers, and never reads past what it was given (ASan would stop it).
TEST(LineProgramRobustness, TruncatedAndCorruptedPrograms) {
  std::string compiler = find_program("g++");
  TALLY_REQUIRE_PEER(compiler, "g++");
  TempDir dir;
  std::string binary = build(dir, {compiler, "-O1", "-g"});
  Dwarf dwarf(binary);
  ASSERT_NE(dwarf.get(), nullptr);
  const LineSections sections = dwarf.sections().lines;
  auto units = units_with_lines(dwarf.get());
  ASSERT_FALSE(units.empty());
  const Unit& unit = units.front();
  ASSERT_LT(unit.line_offset, sections.line.size());
  std::vector<uint8_t> original(sections.line.begin() + static_cast<ptrdiff_t>(unit.line_offset),
                                sections.line.end());
  std::vector<uint64_t> addresses;
  for (uint64_t a = 0; a < 0x4000; a += 3) addresses.push_back(a);
  std::vector<LineRow> rows(addresses.size());

  size_t refused = 0;
  for (size_t size = 0; size < original.size(); size += 1 + size / 64) {
    // A copy of exactly `size` bytes, so that reading past it is an ASan error.
    auto copy = std::make_unique<uint8_t[]>(size + 1);
    std::memcpy(copy.get(), original.data(), size);
    LineSections cut = sections;
    cut.line = {copy.get(), size};
    auto program = LineProgram::read(cut, 0, unit.comp_dir, unit.address_size);
    if (!program || !program->find_rows(addresses, rows)) ++refused;
  }
  EXPECT_GT(refused, 0u);
  // A header cut short is refused outright.
  LineSections tiny = sections;
  tiny.line = sections.line.subspan(unit.line_offset, 10);
  EXPECT_FALSE(LineProgram::read(tiny, 0, unit.comp_dir, unit.address_size).has_value());

  size_t corrupt_refused = 0;
  for (size_t at = 0; at < std::min<size_t>(original.size(), 400); ++at) {
    for (uint8_t value : {uint8_t{0}, uint8_t{0x7f}, uint8_t{0xff}}) {
      std::vector<uint8_t> corrupt = original;
      corrupt[at] = value;
      LineSections changed = sections;
      changed.line = corrupt;
      auto program = LineProgram::read(changed, 0, unit.comp_dir, unit.address_size);
      if (!program || !program->find_rows(addresses, rows)) ++corrupt_refused;
    }
  }
  // The unit length and version bytes alone make some of these unreadable.
  EXPECT_GT(corrupt_refused, 0u);
}

// DieWalker on a unit cut short and on bytes set to extreme values in its first DIEs.
TEST(DieWalkerRobustness, TruncatedAndCorruptedUnits) {
  std::string compiler = find_program("g++");
  TALLY_REQUIRE_PEER(compiler, "g++");
  TempDir dir;
  Dwarf dwarf(build(dir, {compiler, "-O1", "-g"}));
  ASSERT_NE(dwarf.get(), nullptr);
  const DieSections sections = dwarf.sections().dies;
  auto units = units_with_lines(dwarf.get());
  ASSERT_FALSE(units.empty());
  const uint64_t unit_offset = dwarf_dieoffset(&units.front().die) - dwarf_cuoffset(&units.front().die);
  const uint64_t die_offset = dwarf_dieoffset(&units.front().die);
  std::vector<uint8_t> original(sections.info.begin(), sections.info.end());
  std::vector<DieEntry> entries;
  size_t refused = 0;
  for (size_t size = unit_offset; size < original.size(); size += 1 + (size - unit_offset) / 32) {
    auto copy = std::make_unique<uint8_t[]>(size + 1);
    std::memcpy(copy.get(), original.data(), size);
    DieSections cut = sections;
    cut.info = {copy.get(), size};
    auto walker = DieWalker::open(cut, unit_offset);
    if (!walker || !walker->children(die_offset, entries)) ++refused;
  }
  EXPECT_GT(refused, 0u);
  size_t corrupt_refused = 0;
  for (size_t at = unit_offset; at < std::min<size_t>(original.size(), unit_offset + 300); ++at) {
    for (uint8_t value : {uint8_t{0}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::vector<uint8_t> corrupt = original;
      corrupt[at] = value;
      DieSections changed = sections;
      changed.info = corrupt;
      auto walker = DieWalker::open(changed, unit_offset);
      if (!walker || !walker->children(die_offset, entries)) ++corrupt_refused;
    }
  }
  EXPECT_GT(corrupt_refused, 0u);
}

}  // namespace
}  // namespace tally::test
