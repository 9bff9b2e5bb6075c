// Compiles the call-frame programs of an .eh_frame or .debug_frame section (x86-64) into rows of compact
// unwind rules, one row per address range where the rule is constant (framehop's design):
// the signal handler then only binary-searches rows and applies one. Runs outside the
// handler (it is not async-signal-safe only in that it may be slow), reads nothing but
// the given bytes, allocates nothing. The bytes are untrusted (fuzz/fuzz_runtime_cfi.cc):
// malformed input ends the compilation with an error, never a read out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tally::runtime {

enum class RuleKind : uint8_t {
  none,         // no CFI covers the address
  cfa_rsp,      // CFA = rsp + cfa_offset; return address at CFA - 8
  cfa_rbp,      // CFA = rbp + cfa_offset (a frame-pointer frame)
  plt,          // the PLT's expression: CFA = rsp + cfa_offset + ((pc & 15) >= threshold ? 8 : 0)
  root,         // the return address is undefined: the thread's outermost frame
  signal,       // a signal trampoline (__restore_rt): the interrupted registers are at rsp
  stack_switch, // the return address kept in a register, or the CFA in another register
                // and the return address not at CFA-8: __longjmp, setcontext, vfork's return
  unsupported,  // a rule this compiler does not model (a CFA expression, ...)
  cfa_rbx,      // CFA = rbx + cfa_offset: ld.so's _dl_runtime_resolve_* (a realigned stack)
  cfa_at_rbp,   // CFA = *(rbp + cfa_offset): GCC's stack-realigning prologue (DW_OP_deref)
};

// Where the caller's value of a callee-saved register (rbp, rbx) is.
enum class SavedRule : uint8_t {
  same,    // the caller's value is this frame's
  at_cfa,  // saved at CFA + offset
  lost,    // somewhere this compiler does not model: unknown from here on
  at_rbp,  // saved at this frame's rbp + offset (DW_CFA_expression DW_OP_breg6: realigned frames)
};
using RbpRule = SavedRule;

// 16 bytes (an index holds millions for big programs): the two saved-register rules share
// a byte, their offsets are in 8-byte slots (a save elsewhere, or farther than
// 127 slots, is SavedRule::lost).
struct UnwindRow {
  uint64_t address = 0;    // first address the rule holds for (until the next row's)
  int32_t cfa_offset = 0;
  RuleKind kind = RuleKind::none;
  uint8_t saved_rules = 0;  // rbp's SavedRule in bits 0-1, rbx's in bits 2-3
  int8_t rbp_slot = 0;      // rbp's offset / 8; RuleKind::plt's threshold
  int8_t rbx_slot = 0;      // rbx's offset / 8

  SavedRule rbp() const { return static_cast<SavedRule>(saved_rules & 3); }
  SavedRule rbx() const { return static_cast<SavedRule>((saved_rules >> 2) & 3); }
  int64_t rbp_offset() const { return int64_t{rbp_slot} * 8; }
  int64_t rbx_offset() const { return int64_t{rbx_slot} * 8; }
  int plt_threshold() const { return rbp_slot; }
  // Offsets must be representable (a multiple of 8 within +-127 slots): else lost.
  void set_rbp(SavedRule rule, int64_t offset = 0) { rbp_slot = set_saved(0, rule, offset); }
  void set_rbx(SavedRule rule, int64_t offset = 0) { rbx_slot = set_saved(2, rule, offset); }
  bool operator==(const UnwindRow&) const = default;

 private:
  int8_t set_saved(int shift, SavedRule rule, int64_t offset) {
    bool saved = rule == SavedRule::at_cfa || rule == SavedRule::at_rbp;
    if (saved && (offset % 8 != 0 || offset / 8 < -127 || offset / 8 > 127)) rule = SavedRule::lost;
    saved_rules = static_cast<uint8_t>((saved_rules & ~(3u << shift)) | (static_cast<unsigned>(rule) << shift));
    return static_cast<int8_t>(rule == SavedRule::at_cfa || rule == SavedRule::at_rbp ? offset / 8 : 0);
  }
};
static_assert(sizeof(UnwindRow) == 16, "the index's memory: see above");

struct EhFrameSection {
  const uint8_t* bytes = nullptr;
  size_t size = 0;
  uint64_t address = 0;  // the run-time address of bytes[0] (pc-relative pointers)
};

// A .debug_frame section (not loaded: read from the image's file). Its addresses are
// link-time ones: `load_bias` (dl_iterate_phdr's dlpi_addr) makes them run-time ones.
struct DebugFrameSection {
  const uint8_t* bytes = nullptr;
  size_t size = 0;
  uint64_t load_bias = 0;
};

struct CompileResult {
  bool ok = true;
  size_t error_offset = 0;    // first malformed byte, when !ok
  const char* error = nullptr;  // what was expected there
  size_t fdes = 0;            // FDEs compiled
};

// Receives the rows of each FDE in address order, then a RuleKind::none row at its end.
using RowSink = void (*)(void* context, const UnwindRow& row);

// Compiles every FDE of the section, from its start to its zero terminator or its end.
// Rows of FDEs that precede a malformed entry have been delivered.
CompileResult compile_eh_frame(const EhFrameSection& section, RowSink sink, void* context);
// The same for .debug_frame: CIE id all ones, CIE pointers from the section's start,
// absolute addresses (a CIE without augmentation has no pointer encoding), 64-bit DWARF
// entries too; zero-length entries are skipped (no terminator).
CompileResult compile_debug_frame(const DebugFrameSection& section, RowSink sink, void* context);

// Sorts rows by address and merges them in place: at one address the start of a function
// wins over the end (RuleKind::none) of the one before; runs of one rule become one row.
// Returns the rows kept. Not async-signal-safe (std::sort), allocates nothing.
size_t sort_unwind_rows(UnwindRow* rows, size_t count);

// The row of sorted rows whose range holds `address`, or nullptr (none there).
// Async-signal-safe.
const UnwindRow* find_unwind_row(const UnwindRow* rows, size_t count, uint64_t address);

}  // namespace tally::runtime
