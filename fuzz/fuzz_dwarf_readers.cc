// tally's own DWARF readers on any bytes (a binary's debug sections are untrusted input):
// LineProgram reads the bytes as .debug_line and runs the program for a spread of
// addresses; DieWalker reads the first half as .debug_info and the second as
// .debug_abbrev and lists the children of the unit's first DIEs. Either may give up; what
// it returns must stay inside what it was given.
#include <cstdint>
#include <vector>

#include "fuzz_check.h"
#include "symbolize/die_walker.h"
#include "symbolize/line_program.h"

using namespace tally;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);

  symbolize::LineSections lines{bytes, bytes, bytes};
  for (unsigned address_size : {4u, 8u}) {
    auto program = symbolize::LineProgram::read(lines, 0, "/comp", address_size);
    if (!program) continue;
    std::vector<uint64_t> addresses;
    for (uint64_t a = 0; a < 0x2000; a += 13) addresses.push_back(a);
    std::vector<symbolize::LineRow> rows(addresses.size());
    if (program->find_rows(addresses, rows)) {
      for (const auto& row : rows)
        FUZZ_CHECK(!row.found || row.line >= INT32_MIN, "a row's line fits libdw's int");
    }
    FUZZ_CHECK(!program->files().empty(), "file 0 always exists");
  }

  const size_t half = size / 2;
  symbolize::DieSections dies{bytes.first(half), bytes.subspan(half)};
  if (auto walker = symbolize::DieWalker::open(dies, 0)) {
    std::vector<symbolize::DieEntry> entries;
    for (uint64_t offset = 0; offset < std::min<size_t>(half, 64); ++offset) {
      if (!walker->children(offset, entries)) continue;
      for (const auto& entry : entries)
        FUZZ_CHECK(entry.offset < half, "a child lies inside .debug_info");
    }
  }
  return 0;
}
