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
  uintptr_t pc = registers.pc, sp = registers.sp, fp = registers.fp;
  bool exact_pc = true;  // the interrupted pc, not a return address
  bool fp_known = true;
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
      uintptr_t saved_pc, saved_sp, saved_fp;
      if (!stack.read(sp + saved_register(REG_RIP), &saved_pc) ||
          !stack.read(sp + saved_register(REG_RSP), &saved_sp) ||
          !stack.read(sp + saved_register(REG_RBP), &saved_fp)) {
        *cut = StackCut::bad_stack;
        break;
      }
      if (depth >= max_depth - 1) {
        *cut = StackCut::too_deep;
        break;
      }
      pc = saved_pc, sp = saved_sp, fp = saved_fp;
      exact_pc = true;
      fp_known = true;
      pcs[depth++] = pc;
      continue;
    }
    uintptr_t cfa;
    if (row->kind == RuleKind::cfa_rbp) {
      if (!fp_known) {
        *cut = StackCut::unsupported;
        break;
      }
      cfa = fp + static_cast<intptr_t>(row->cfa_offset);
    } else {
      cfa = sp + static_cast<intptr_t>(row->cfa_offset);
      if (row->kind == RuleKind::plt && (pc & 15) >= static_cast<uintptr_t>(row->rbp_offset)) cfa += 8;
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
    if (row->rbp == RbpRule::at_cfa) {
      if (!stack.read(cfa + row->rbp_offset, &fp)) {
        *cut = StackCut::bad_stack;
        break;
      }
    } else if (row->rbp == RbpRule::lost) {
      fp_known = false;
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
