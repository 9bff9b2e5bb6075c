#include "runtime/cfi_walk.h"

#include <stddef.h>
#include <ucontext.h>

#include "runtime/unwind_index.h"

namespace tally::runtime {
namespace {

struct StackReader {
  const StackBounds& bounds;
  bool read(uintptr_t address, uintptr_t* value) const {
    if (address % sizeof(uintptr_t) != 0) return false;
    if (bounds.holds(address, sizeof(uintptr_t))) {
      *value = *reinterpret_cast<const uintptr_t*>(address);
      return true;
    }
    // Another stack (a signal handler's sigaltstack, unknown bounds): a safe read.
    return read_memory_safely(address, value, sizeof *value);
  }
};

// A callee-saved register as the walk knows it in the current frame.
struct TrackedRegister {
  uintptr_t value = 0;
  bool known = true;
};

// The caller's value of a register, by its rule in this frame: `cfa` and `fp` (this
// frame's rbp) locate the save. False on a failed stack read.
bool restore_register(const StackReader& stack, SavedRule rule, int64_t offset, uintptr_t cfa,
                      const TrackedRegister& fp, TrackedRegister* reg) {
  switch (rule) {
    case SavedRule::same: return true;
    case SavedRule::at_cfa:
      reg->known = true;
      return stack.read(cfa + static_cast<uintptr_t>(offset), &reg->value);
    case SavedRule::at_rbp:
      if (!fp.known) {
        reg->known = false;
        return true;
      }
      reg->known = true;
      return stack.read(fp.value + static_cast<uintptr_t>(offset), &reg->value);
    case SavedRule::lost: reg->known = false; return true;
  }
  return true;
}

#if defined(__x86_64__)
constexpr size_t kSavedRegisters = offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, gregs);
constexpr size_t saved_register(int index) { return kSavedRegisters + sizeof(greg_t) * static_cast<size_t>(index); }
#endif

}  // namespace

int walk_stack_cfi(const UnwindIndex* index, const Registers& registers,
                   const StackBounds& bounds, uintptr_t* pcs, int max_depth, StackCut* cut) {
  *cut = StackCut::none;
  if (max_depth < 2) return 0;
  int depth = 0;
  pcs[depth++] = registers.pc;
#if defined(__x86_64__)
  StackReader stack{bounds};
  uintptr_t pc = registers.pc, sp = registers.sp;
  TrackedRegister fp{registers.fp}, bx{registers.bx};
  bool exact_pc = true;  // the interrupted pc, not a return address
  for (;;) {
    if (exact_pc && index != nullptr && pc >= index->swapcontext_start && pc < index->swapcontext_end) {
      *cut = StackCut::stack_switch;
      break;
    }
    const UnwindRow* row = index == nullptr ? nullptr : find_unwind_row(*index, exact_pc ? pc : pc - 1);
    if (row == nullptr) {
      // A return address at a function's first instruction, right after code without
      // rules, was pushed, not left by a call: makecontext's return into __start_context,
      // a coroutine's root. Reported one past it, as a return address (readers subtract one).
      const UnwindRow* entry = exact_pc || index == nullptr ? nullptr : find_unwind_row(*index, pc);
      if (entry != nullptr && entry->address == pc) {
        pcs[depth - 1] = pc + 1;
        break;
      }
      *cut = StackCut::no_unwind_info;
      break;
    }
    if (row->kind == RuleKind::root) break;
    if (row->kind == RuleKind::unsupported) {
      *cut = StackCut::unsupported;
      break;
    }
    if (row->kind == RuleKind::stack_switch) {
      *cut = StackCut::stack_switch;
      break;
    }
    if (row->kind == RuleKind::signal) {
      // rsp points at the ucontext_t the kernel saved (the handler returned into here).
      uintptr_t saved_pc, saved_sp, saved_fp, saved_bx;
      if (!stack.read(sp + saved_register(REG_RIP), &saved_pc) ||
          !stack.read(sp + saved_register(REG_RSP), &saved_sp) ||
          !stack.read(sp + saved_register(REG_RBP), &saved_fp) ||
          !stack.read(sp + saved_register(REG_RBX), &saved_bx)) {
        *cut = StackCut::bad_stack;
        break;
      }
      if (depth >= max_depth - 1) {
        *cut = StackCut::too_deep;
        break;
      }
      pc = saved_pc, sp = saved_sp, fp = {saved_fp}, bx = {saved_bx};
      exact_pc = true;
      pcs[depth++] = pc;
      continue;
    }
    uintptr_t cfa;
    const auto offset = static_cast<uintptr_t>(static_cast<intptr_t>(row->cfa_offset));
    if (row->kind == RuleKind::cfa_rbp || row->kind == RuleKind::cfa_rbx || row->kind == RuleKind::cfa_at_rbp) {
      const TrackedRegister& base = row->kind == RuleKind::cfa_rbx ? bx : fp;
      if (!base.known) {
        *cut = StackCut::unsupported;
        break;
      }
      cfa = base.value + offset;
      if (row->kind == RuleKind::cfa_at_rbp && !stack.read(cfa, &cfa)) {
        *cut = StackCut::bad_stack;
        break;
      }
    } else {
      cfa = sp + static_cast<intptr_t>(row->cfa_offset);
      if (row->kind == RuleKind::plt && (pc & 15) >= static_cast<uintptr_t>(row->plt_threshold())) cfa += 8;
    }
    if (cfa <= sp) {
      *cut = StackCut::no_progress;
      break;
    }
    uintptr_t return_address;
    if (!stack.read(cfa - sizeof(uintptr_t), &return_address)) {
      *cut = StackCut::bad_stack;
      break;
    }
    // rbx first: its save may be found from this frame's rbp.
    const TrackedRegister frame_fp = fp;
    if (!restore_register(stack, row->rbx(), row->rbx_offset(), cfa, frame_fp, &bx) ||
        !restore_register(stack, row->rbp(), row->rbp_offset(), cfa, frame_fp, &fp)) {
      *cut = StackCut::bad_stack;
      break;
    }
    if (return_address == 0) break;  // a thread's outermost frame without CFI saying so
    if (depth >= max_depth - 1) {
      *cut = StackCut::too_deep;
      break;
    }
    pcs[depth++] = return_address;
    pc = return_address;
    sp = cfa;
    exact_pc = false;
  }
#else
  (void)index, (void)bounds;
  *cut = StackCut::no_unwind_info;
#endif
  if (*cut != StackCut::none) pcs[depth++] = stack_cut_frame(*cut);
  return depth;
}

}  // namespace tally::runtime
