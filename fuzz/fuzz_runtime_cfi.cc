// libtally's CFI compiler (src/runtime/cfi_compiler.cc) on any bytes as an .eh_frame, and
// as a .debug_frame (the input's first byte chooses): in a profiled process it reads every
// loaded image's sections, whatever produced them. It may
// stop with an error; the rows it gives, sorted, must be strictly ordered and each found
// by its own address, their saved-register rules consistent.
#include <cstdint>
#include <vector>

#include "fuzz_check.h"
#include "runtime/cfi_compiler.h"

using namespace tally::runtime;

namespace {

void collect(void* context, const UnwindRow& row) {
  static_cast<std::vector<UnwindRow>*>(context)->push_back(row);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<UnwindRow> rows;
  bool debug_frame = size > 0 && (data[0] & 1) != 0;
  if (size > 0) ++data, --size;
  CompileResult result = debug_frame ? compile_debug_frame({data, size, 0x400000}, collect, &rows)
                                     : compile_eh_frame({data, size, 0x400000}, collect, &rows);
  if (!result.ok) {
    FUZZ_CHECK(result.error != nullptr, "an error says what was expected");
    FUZZ_CHECK(result.error_offset <= size, "the error's offset is inside the input");
  }
  rows.resize(sort_unwind_rows(rows.data(), rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) FUZZ_CHECK(rows[i - 1].address < rows[i].address, "sorted rows are strictly ordered");
    const UnwindRow* found = find_unwind_row(rows.data(), rows.size(), rows[i].address);
    if (rows[i].kind == RuleKind::none) {
      FUZZ_CHECK(found == nullptr, "a gap finds no rule");
    } else {
      FUZZ_CHECK(found == &rows[i], "a row's address finds that row");
    }
    // A saved-register rule without a save carries no offset (rows compare equal by fields).
    const UnwindRow& row = rows[i];
    bool rbx_saved = row.rbx() == SavedRule::at_cfa || row.rbx() == SavedRule::at_rbp;
    bool rbp_saved = row.rbp() == SavedRule::at_cfa || row.rbp() == SavedRule::at_rbp;
    FUZZ_CHECK(rbx_saved || row.rbx_slot == 0, "rbx: an offset only when saved");
    FUZZ_CHECK(rbp_saved || row.kind == RuleKind::plt || row.rbp_slot == 0, "rbp: an offset only when saved");
  }
  return 0;
}
