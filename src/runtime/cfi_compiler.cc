#include "runtime/cfi_compiler.h"

#include <algorithm>
#include <cstring>

namespace tally::runtime {
namespace {

// DWARF register numbers of x86-64.
constexpr uint64_t kRbx = 3;
constexpr uint64_t kRbp = 6;
constexpr uint64_t kRsp = 7;
constexpr uint64_t kReturnAddress = 16;

// Bounds-checked little-endian reads; the first failure sticks (all later reads give 0).
struct Cursor {
  const uint8_t* base;
  size_t position;
  size_t end;
  bool failed = false;

  bool has(size_t bytes) {
    if (failed || end - position < bytes || position > end) failed = true;
    return !failed;
  }
  uint64_t fixed(size_t bytes) {
    if (!has(bytes)) return 0;
    uint64_t value = 0;
    memcpy(&value, base + position, bytes);
    position += bytes;
    return value;
  }
  uint8_t u8() { return static_cast<uint8_t>(fixed(1)); }
  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (!has(1)) return 0;
      uint8_t byte = base[position++];
      if (shift < 64) value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
      if (shift > 70) {
        failed = true;
        return 0;
      }
    }
  }
  int64_t sleb() {
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
      if (!has(1) || shift > 70) {
        failed = true;
        return 0;
      }
      byte = base[position++];
      if (shift < 64) value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(value);
  }
  void skip(uint64_t bytes) {
    if (bytes > end - position) {
      failed = true;
      return;
    }
    position += bytes;
  }
};

// factor * value as two's complement (wrapping): offsets from untrusted input may be huge.
int64_t scaled(uint64_t value, int64_t factor) {
  return static_cast<int64_t>(value * static_cast<uint64_t>(factor));
}

// A DW_EH_PE_* encoded pointer; `section_address` makes pc-relative ones absolute.
bool read_pointer(Cursor& cursor, uint8_t encoding, uint64_t section_address, uint64_t* out) {
  if (encoding == 0xff) return false;  // omitted
  uint64_t field_address = section_address + cursor.position;
  uint64_t value = 0;
  switch (encoding & 0x0f) {
    case 0x00: value = cursor.fixed(8); break;
    case 0x01: value = cursor.uleb(); break;
    case 0x02: value = cursor.fixed(2); break;
    case 0x03: value = cursor.fixed(4); break;
    case 0x04: value = cursor.fixed(8); break;
    case 0x09: value = static_cast<uint64_t>(cursor.sleb()); break;
    case 0x0a: value = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(cursor.fixed(2)))); break;
    case 0x0b: value = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(cursor.fixed(4)))); break;
    case 0x0c: value = cursor.fixed(8); break;
    default: cursor.failed = true; return false;
  }
  switch (encoding & 0x70) {
    case 0x00: break;
    case 0x10: value += field_address; break;
    default: cursor.failed = true; return false;  // textrel/datarel/funcrel: not in .eh_frame FDEs
  }
  *out = value;
  return !cursor.failed;
}

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint64_t return_register = kReturnAddress;
  uint8_t pointer_encoding = 0;
  bool has_augmentation_data = false;
  bool signal_frame = false;
  uint64_t location_bias = 0;   // added to DW_CFA_set_loc's address (.debug_frame's load bias)
  size_t instructions = 0;      // offsets into the section
  size_t instructions_end = 0;
};

enum class CfaKind : uint8_t { rsp, rbp, rbx, plt, deref_rbp, other_register, other };
// rbp_offset: DW_CFA_expression's DW_OP_breg6 N alone (saved at rbp + N).
enum class SavedAt : uint8_t { same, cfa_offset, rbp_offset, undefined, in_register, other };

struct State {
  CfaKind cfa = CfaKind::rsp;
  int64_t cfa_offset = 8;
  int64_t plt_threshold = 0;
  SavedAt rbp = SavedAt::same;
  int64_t rbp_offset = 0;
  SavedAt rbx = SavedAt::same;
  int64_t rbx_offset = 0;
  SavedAt ra = SavedAt::cfa_offset;
  int64_t ra_offset = -8;
  bool operator==(const State&) const = default;
};

constexpr int kMaxRememberedStates = 16;

// The PLT's well-known CFA expression (binutils' .plt, .plt.sec with IBT, .plt.got):
// DW_OP_breg7 (rsp) N; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and; DW_OP_litT; DW_OP_ge;
// DW_OP_lit3; DW_OP_shl; DW_OP_plus.
bool match_plt_expression(const uint8_t* expression, size_t length, State& state) {
  Cursor cursor{expression, 0, length};
  if (cursor.u8() != 0x77) return false;
  int64_t offset = cursor.sleb();
  if (cursor.u8() != 0x80 || cursor.sleb() != 0 || cursor.u8() != 0x3f || cursor.u8() != 0x1a)
    return false;
  uint8_t threshold = cursor.u8();
  if (threshold < 0x30 || threshold > 0x4f) return false;
  if (cursor.u8() != 0x2a || cursor.u8() != 0x33 || cursor.u8() != 0x24 || cursor.u8() != 0x22)
    return false;
  if (cursor.failed || cursor.position != length) return false;
  state.cfa = CfaKind::plt;
  state.cfa_offset = offset;
  state.plt_threshold = threshold - 0x30;
  return true;
}

// GCC's stack-realigning prologue (a DRAP register, pushed below the saved rbp):
// DW_OP_breg6 (rbp) N; DW_OP_deref, i.e. CFA = *(rbp + N).
bool match_deref_rbp_expression(const uint8_t* expression, size_t length, State& state) {
  Cursor cursor{expression, 0, length};
  if (cursor.u8() != 0x76) return false;
  int64_t offset = cursor.sleb();
  if (cursor.u8() != 0x06 || cursor.failed || cursor.position != length) return false;
  state.cfa = CfaKind::deref_rbp;
  state.cfa_offset = offset;
  return true;
}

// A register rule's expression (DW_CFA_expression: the address it is saved at): rbp + N
// (DW_OP_breg6 N), as realigned frames save registers; *offset = N.
bool match_saved_at_rbp(const uint8_t* expression, size_t length, int64_t* offset) {
  Cursor cursor{expression, 0, length};
  if (cursor.u8() != 0x76) return false;
  *offset = cursor.sleb();
  return !cursor.failed && cursor.position == length;
}

SavedRule saved_rule_of(SavedAt saved) {
  switch (saved) {
    case SavedAt::same: return SavedRule::same;
    case SavedAt::cfa_offset: return SavedRule::at_cfa;
    case SavedAt::rbp_offset: return SavedRule::at_rbp;
    default: return SavedRule::lost;
  }
}

UnwindRow row_of(const State& state, uint64_t address, bool signal_frame) {
  UnwindRow row;
  row.address = address;
  if (signal_frame) {
    row.kind = RuleKind::signal;
    return row;
  }
  if (state.ra == SavedAt::undefined) {
    row.kind = RuleKind::root;
    return row;
  }
  // Code between stacks: the return address kept in a register (vfork's return, __longjmp),
  // or the CFA in another register with the return address not just below it (setcontext).
  // A realigning prologue's CFA in r10 keeps the return address at CFA-8: unsupported
  // (a few instructions of the prologue; the CFA is *(rbp-8) once it has saved r10).
  bool ra_below_cfa = state.ra == SavedAt::cfa_offset && state.ra_offset == -8;
  bool cfa_elsewhere = state.cfa == CfaKind::other_register || state.cfa == CfaKind::rbx;
  if (state.ra == SavedAt::in_register || (cfa_elsewhere && !ra_below_cfa)) {
    row.kind = RuleKind::stack_switch;
    return row;
  }
  bool offset_fits = state.cfa_offset >= INT32_MIN && state.cfa_offset <= INT32_MAX;
  if (state.ra != SavedAt::cfa_offset || state.ra_offset != -8 || !offset_fits) {
    row.kind = RuleKind::unsupported;
    return row;
  }
  row.cfa_offset = static_cast<int32_t>(state.cfa_offset);
  switch (state.cfa) {
    case CfaKind::rsp: row.kind = RuleKind::cfa_rsp; break;
    case CfaKind::rbp: row.kind = RuleKind::cfa_rbp; break;
    case CfaKind::rbx: row.kind = RuleKind::cfa_rbx; break;
    case CfaKind::deref_rbp: row.kind = RuleKind::cfa_at_rbp; break;
    case CfaKind::plt:
      row.kind = RuleKind::plt;
      row.rbp_slot = static_cast<int8_t>(state.plt_threshold);
      return row;  // PLT stubs do not touch rbp
    case CfaKind::other_register:
    case CfaKind::other: row.kind = RuleKind::unsupported; return row;
  }
  row.set_rbp(saved_rule_of(state.rbp), state.rbp_offset);
  row.set_rbx(saved_rule_of(state.rbx), state.rbx_offset);
  return row;
}

struct Interpreter {
  const Cie& cie;
  const State* initial;  // the CIE's state (DW_CFA_restore), null while running the CIE
  State state;
  State remembered[kMaxRememberedStates];
  int remembered_count = 0;
  uint64_t location = 0;
  uint64_t end = 0;
  RowSink sink = nullptr;
  void* context = nullptr;
  bool emit = false;

  void set_rule(uint64_t reg, SavedAt rule, int64_t offset) {
    if (reg == kRbp) {
      state.rbp = rule;
      state.rbp_offset = offset;
    } else if (reg == kRbx) {
      state.rbx = rule;
      state.rbx_offset = offset;
    } else if (reg == cie.return_register) {
      state.ra = rule;
      state.ra_offset = offset;
    }
  }
  void restore_rule(uint64_t reg) {
    if (initial == nullptr) return;
    if (reg == kRbp) {
      state.rbp = initial->rbp;
      state.rbp_offset = initial->rbp_offset;
    } else if (reg == kRbx) {
      state.rbx = initial->rbx;
      state.rbx_offset = initial->rbx_offset;
    } else if (reg == cie.return_register) {
      state.ra = initial->ra;
      state.ra_offset = initial->ra_offset;
    }
  }
  void set_cfa_register(uint64_t reg) {
    state.cfa = reg == kRsp   ? CfaKind::rsp
                : reg == kRbp ? CfaKind::rbp
                : reg == kRbx ? CfaKind::rbx
                : reg < 16    ? CfaKind::other_register  // a general register
                              : CfaKind::other;
  }
  // The rule so far holds up to `next`; rows are only sent for non-empty ranges.
  void advance(uint64_t delta) {
    uint64_t next = location + delta;
    if (next < location || next > end) next = end;  // past the FDE: clamp
    if (emit && next > location) sink(context, row_of(state, location, cie.signal_frame));
    location = next;
  }

  // Runs instructions [position, limit). False (cursor failed) on malformed input.
  bool run(Cursor& cursor, size_t limit) {
    Cursor code{cursor.base, cursor.position, limit};
    while (code.position < limit && !code.failed) {
      uint8_t op = code.u8();
      uint8_t low = op & 0x3f;
      switch (op >> 6) {
        case 1: advance(low * cie.code_align); continue;
        case 2: set_rule(low, SavedAt::cfa_offset, scaled(code.uleb(), cie.data_align)); continue;
        case 3: restore_rule(low); continue;
        default: break;
      }
      switch (op) {
        case 0x00: break;  // nop
        case 0x01: {       // set_loc
          uint64_t target = 0;
          if (!read_pointer(code, cie.pointer_encoding, 0, &target)) return false;
          target += cie.location_bias;
          if (target > location) advance(target - location);
          break;
        }
        case 0x02: advance(code.fixed(1) * cie.code_align); break;
        case 0x03: advance(code.fixed(2) * cie.code_align); break;
        case 0x04: advance(code.fixed(4) * cie.code_align); break;
        case 0x05: {
          uint64_t reg = code.uleb();
          set_rule(reg, SavedAt::cfa_offset, scaled(code.uleb(), cie.data_align));
          break;
        }
        case 0x06: restore_rule(code.uleb()); break;
        case 0x07: set_rule(code.uleb(), SavedAt::undefined, 0); break;
        case 0x08: set_rule(code.uleb(), SavedAt::same, 0); break;
        case 0x09: {  // register: kept in another register
          uint64_t reg = code.uleb();
          code.uleb();
          set_rule(reg, SavedAt::in_register, 0);
          break;
        }
        case 0x0a:
          if (remembered_count == kMaxRememberedStates) return false;
          remembered[remembered_count++] = state;
          break;
        case 0x0b:
          if (remembered_count == 0) return false;
          // The CFA rule comes back too: compilers put remember/restore around an
          // epilogue's CFA changes (libgcc's unwinder restores it as well).
          state = remembered[--remembered_count];
          break;
        case 0x0c: {
          set_cfa_register(code.uleb());
          state.cfa_offset = static_cast<int64_t>(code.uleb());
          break;
        }
        case 0x0d: {
          set_cfa_register(code.uleb());
          break;
        }
        case 0x0e: state.cfa_offset = static_cast<int64_t>(code.uleb()); break;
        case 0x0f: {  // def_cfa_expression
          uint64_t length = code.uleb();
          if (!code.has(length)) return false;
          const uint8_t* expression = code.base + code.position;
          code.skip(length);
          if (!match_plt_expression(expression, length, state) &&
              !match_deref_rbp_expression(expression, length, state)) {
            state.cfa = CfaKind::other;
          }
          break;
        }
        case 0x10:    // expression
        case 0x16: {  // val_expression
          uint64_t reg = code.uleb();
          uint64_t length = code.uleb();
          if (!code.has(length)) return false;
          const uint8_t* expression = code.base + code.position;
          code.skip(length);
          int64_t offset = 0;
          if (op == 0x10 && match_saved_at_rbp(expression, length, &offset)) set_rule(reg, SavedAt::rbp_offset, offset);
          else set_rule(reg, SavedAt::other, 0);
          break;
        }
        case 0x11: {
          uint64_t reg = code.uleb();
          set_rule(reg, SavedAt::cfa_offset, scaled(static_cast<uint64_t>(code.sleb()), cie.data_align));
          break;
        }
        case 0x12: {
          set_cfa_register(code.uleb());
          state.cfa_offset = scaled(static_cast<uint64_t>(code.sleb()), cie.data_align);
          break;
        }
        case 0x13: state.cfa_offset = scaled(static_cast<uint64_t>(code.sleb()), cie.data_align); break;
        case 0x14:
        case 0x15: {  // val_offset: the register's value is CFA + N, not stored
          uint64_t reg = code.uleb();
          if (op == 0x14) code.uleb(); else code.sleb();
          set_rule(reg, SavedAt::other, 0);
          break;
        }
        case 0x2e: code.uleb(); break;  // GNU_args_size
        case 0x2f: {                    // GNU_negative_offset_extended
          uint64_t reg = code.uleb();
          set_rule(reg, SavedAt::cfa_offset, scaled(0 - code.uleb(), cie.data_align));
          break;
        }
        default: return false;
      }
    }
    return !code.failed;
  }
};

// Entry at `start`: its length field. Sets `content` (after the length) and `next`.
bool read_entry_bounds(Cursor& cursor, size_t* content, size_t* next, bool* terminator,
                       bool* dwarf64 = nullptr) {
  uint64_t length = cursor.fixed(4);
  if (dwarf64 != nullptr) *dwarf64 = length == 0xffffffff;
  if (cursor.failed) return false;
  if (length == 0) {
    *terminator = true;
    return true;
  }
  if (length == 0xffffffff) {
    length = cursor.fixed(8);
    if (cursor.failed) return false;
  }
  if (length > cursor.end - cursor.position) return false;
  *content = cursor.position;
  *next = cursor.position + length;
  return true;
}

// What differs between the two sections. .eh_frame: CIE id 0, an FDE's CIE pointer is
// relative to itself, addresses are DW_EH_PE-encoded (pc-relative against the section's
// run-time address). .debug_frame: CIE id all ones (4 or 8 bytes, 64-bit DWARF), the CIE
// pointer is an offset from the section's start, addresses are absolute link-time ones
// (the image's load bias is added).
struct Format {
  bool debug_frame = false;
  const uint8_t* bytes = nullptr;
  size_t size = 0;
  uint64_t address = 0;  // .eh_frame: run-time address of bytes[0]
  uint64_t bias = 0;     // .debug_frame: load bias
};

bool parse_cie(const Format& section, size_t offset, Cie* cie) {
  Cursor cursor{section.bytes, offset, section.size};
  size_t content = 0, next = 0;
  bool terminator = false, dwarf64 = false;
  if (!read_entry_bounds(cursor, &content, &next, &terminator, &dwarf64) || terminator) return false;
  cursor.end = next;
  if (!section.debug_frame) {
    if (cursor.fixed(4) != 0) return false;  // a CIE's id is 0 in .eh_frame
  } else if (dwarf64 ? cursor.fixed(8) != ~uint64_t{0} : cursor.fixed(4) != 0xffffffff) {
    return false;
  }
  cie->location_bias = section.debug_frame ? section.bias : 0;
  uint8_t version = cursor.u8();
  if (version != 1 && version != 3 && version != 4) return false;
  char augmentation[8] = {};
  size_t length = 0;
  for (;;) {
    uint8_t c = cursor.u8();
    if (cursor.failed || length == sizeof augmentation) return false;
    augmentation[length++] = static_cast<char>(c);
    if (c == 0) break;
  }
  if (version == 4) {
    if (cursor.u8() != 8) return false;  // address size
    cursor.u8();                          // segment selector size
  }
  cie->code_align = cursor.uleb();
  cie->data_align = cursor.sleb();
  cie->return_register = version == 1 ? cursor.u8() : cursor.uleb();
  size_t augmentation_end = cursor.position;
  if (augmentation[0] == 'z') {
    cie->has_augmentation_data = true;
    uint64_t data_length = cursor.uleb();
    if (cursor.failed || data_length > cursor.end - cursor.position) return false;
    augmentation_end = cursor.position + data_length;
    for (size_t i = 1; augmentation[i] != 0; ++i) {
      switch (augmentation[i]) {
        case 'R': cie->pointer_encoding = cursor.u8(); break;
        case 'L': cursor.u8(); break;
        case 'P': {
          uint8_t encoding = cursor.u8();
          uint64_t ignored;
          if (!read_pointer(cursor, encoding & 0x7f, section.address, &ignored)) return false;
          break;
        }
        case 'S': cie->signal_frame = true; break;
        case 'B': break;
        default: i = sizeof augmentation - 1; break;  // unknown: the length lets us skip it
      }
      if (i >= sizeof augmentation - 1) break;
    }
    cursor.position = augmentation_end;
  } else if (augmentation[0] != 0) {
    return false;  // "eh" and other pre-'z' augmentations: not produced by current tools
  }
  if (cursor.failed || cie->code_align == 0) return false;
  cie->instructions = cursor.position;
  cie->instructions_end = next;
  return true;
}

CompileResult compile_frames(const Format& section, RowSink sink, void* context) {
  CompileResult result;
  auto fail = [&](size_t offset, const char* what) {
    result.ok = false;
    result.error_offset = offset;
    result.error = what;
    return result;
  };
  // The most recent CIE, parsed once for the FDEs that follow it (the usual layout).
  size_t cached_cie_offset = SIZE_MAX;
  Cie cie;
  State cie_state;
  size_t offset = 0;
  while (offset < section.size) {
    Cursor cursor{section.bytes, offset, section.size};
    size_t content = 0, next = 0;
    bool terminator = false;
    bool dwarf64 = false;
    if (!read_entry_bounds(cursor, &content, &next, &terminator, &dwarf64))
      return fail(offset, "an entry length within the section");
    if (terminator) {
      if (section.debug_frame) {  // .debug_frame has no terminator: padding, go on
        offset = cursor.position;
        continue;
      }
      break;
    }
    cursor.end = next;
    size_t id_position = cursor.position;
    size_t cie_offset = 0;
    if (!section.debug_frame) {
      uint64_t cie_pointer = cursor.fixed(4);
      if (cursor.failed) return fail(offset, "a CIE id or pointer");
      if (cie_pointer == 0) {  // a CIE: parsed when an FDE uses it
        offset = next;
        continue;
      }
      if (cie_pointer > id_position) return fail(id_position, "a CIE pointer inside the section");
      cie_offset = id_position - cie_pointer;
    } else {
      uint64_t cie_pointer = dwarf64 ? cursor.fixed(8) : cursor.fixed(4);
      if (cursor.failed) return fail(offset, "a CIE id or pointer");
      if (cie_pointer == (dwarf64 ? ~uint64_t{0} : 0xffffffff)) {
        offset = next;
        continue;
      }
      if (cie_pointer >= section.size) return fail(id_position, "a CIE offset inside the section");
      cie_offset = cie_pointer;
    }
    if (cie_offset != cached_cie_offset) {
      cie = Cie{};
      if (!parse_cie(section, cie_offset, &cie)) return fail(cie_offset, "a well-formed CIE");
      Interpreter setup{cie, nullptr, State{}, {}, 0, 0, UINT64_MAX, nullptr, nullptr, false};
      Cursor instructions{section.bytes, cie.instructions, cie.instructions_end};
      if (!setup.run(instructions, cie.instructions_end))
        return fail(cie.instructions, "valid CIE call-frame instructions");
      cie_state = setup.state;
      cached_cie_offset = cie_offset;
    }
    uint64_t pc_begin = 0, pc_range = 0;
    if (!read_pointer(cursor, cie.pointer_encoding, section.address, &pc_begin) ||
        !read_pointer(cursor, cie.pointer_encoding & 0x0f, 0, &pc_range)) {
      return fail(cursor.position, "an FDE's address range");
    }
    pc_begin += cie.location_bias;
    if (cie.has_augmentation_data) {
      cursor.skip(cursor.uleb());
      if (cursor.failed) return fail(cursor.position, "an FDE's augmentation data");
    }
    if (pc_range != 0 && pc_begin + pc_range > pc_begin) {
      Interpreter program{cie, &cie_state, cie_state, {}, 0, pc_begin, pc_begin + pc_range,
                          sink, context, true};
      if (!program.run(cursor, next)) {
        UnwindRow gap;  // the rest of the function has no rule
        gap.address = program.location;
        sink(context, gap);
        return fail(cursor.position, "valid FDE call-frame instructions");
      }
      program.advance(pc_begin + pc_range - program.location);
      UnwindRow gap;
      gap.address = pc_begin + pc_range;
      sink(context, gap);
      ++result.fdes;
    }
    offset = next;
  }
  return result;
}

}  // namespace

CompileResult compile_eh_frame(const EhFrameSection& section, RowSink sink, void* context) {
  return compile_frames({false, section.bytes, section.size, section.address, 0}, sink, context);
}

CompileResult compile_debug_frame(const DebugFrameSection& section, RowSink sink, void* context) {
  return compile_frames({true, section.bytes, section.size, 0, section.load_bias}, sink, context);
}

namespace {

bool row_before(const UnwindRow& a, const UnwindRow& b) {
  if (a.address != b.address) return a.address < b.address;
  return (a.kind != RuleKind::none) < (b.kind != RuleKind::none);
}

bool same_rule(const UnwindRow& a, const UnwindRow& b) {
  return a.kind == b.kind && a.cfa_offset == b.cfa_offset && a.saved_rules == b.saved_rules &&
         a.rbp_slot == b.rbp_slot && a.rbx_slot == b.rbx_slot;
}

}  // namespace

size_t sort_unwind_rows(UnwindRow* rows, size_t count) {
  std::sort(rows, rows + count, row_before);
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    const UnwindRow& row = rows[i];
    if (kept > 0 && rows[kept - 1].address == row.address) {
      rows[kept - 1] = row;
      // The replaced row may now repeat the rule before it.
      if (kept > 1 && same_rule(rows[kept - 2], rows[kept - 1])) --kept;
    } else if (kept == 0 || !same_rule(rows[kept - 1], row)) {
      rows[kept++] = row;
    }
  }
  return kept;
}

const UnwindRow* find_unwind_row(const UnwindRow* rows, size_t count, uint64_t address) {
  size_t low = 0, high = count;  // the first row past `address` is at `low` when they meet
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (rows[middle].address <= address) low = middle + 1;
    else high = middle;
  }
  if (low == 0) return nullptr;
  const UnwindRow* row = &rows[low - 1];
  return row->kind == RuleKind::none ? nullptr : row;
}

}  // namespace tally::runtime
