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

bool in_context_switch(const UnwindIndex& index, uintptr_t pc) {
  for (const auto& range : index.context_switches)
    if (pc >= range.start && pc < range.end) return true;
  return false;
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
  uintptr_t fp = registers.fp;
  bool fp_known = true;
  // rbx is needed only by a CFA kept in it (ld.so's trampoline): its save is read then,
  // not at every frame. bx_save: the stack address holding the current rbx, or 0 (bx has it).
  uintptr_t bx = registers.bx, bx_save = 0;
  bool bx_known = true;
  bool exact_pc = true;  // the interrupted pc, not a return address
  for (;;) {
    if (exact_pc && index != nullptr && in_context_switch(*index, pc)) {
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
      // A return into code without rules (crtstuff's __do_global_dtors_aux, built without
      // unwind tables, calling __cxa_finalize at exit) was mid-call, so its prologue is done:
      // if it keeps a frame pointer, rbp is its frame (caller's rbp at rbp, return address
      // at rbp+8). Taken only when that frame lies above sp and returns into code with
      // rules; anything else is cut as before.
      if (!exact_pc && index != nullptr && fp_known && fp > sp) {
        uintptr_t caller = 0, caller_fp = 0;
        if (stack.read(fp + sizeof(uintptr_t), &caller) && caller > 1 && stack.read(fp, &caller_fp) &&
            find_unwind_row(*index, caller - 1) != nullptr) {
          if (depth >= max_depth - 1) {
            *cut = StackCut::too_deep;
            break;
          }
          pcs[depth++] = caller;
          pc = caller;
          sp = fp + 2 * sizeof(uintptr_t);
          fp = caller_fp;
          bx_save = 0;
          bx_known = false;  // the code may have saved rbx anywhere
          continue;
        }
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
      bx_save = sp + saved_register(REG_RBX);  // read if needed
      bx_known = true;
      pc = saved_pc, sp = saved_sp, fp = saved_fp;
      fp_known = true;
      exact_pc = true;
      pcs[depth++] = pc;
      continue;
    }
    uintptr_t cfa;
    const auto offset = static_cast<uintptr_t>(static_cast<intptr_t>(row->cfa_offset));
    if (row->kind == RuleKind::cfa_rsp || row->kind == RuleKind::plt) {
      cfa = sp + offset;
      if (row->kind == RuleKind::plt && (pc & 15) >= static_cast<uintptr_t>(row->plt_threshold())) cfa += 8;
    } else if (row->kind == RuleKind::cfa_rbx) {
      if (!bx_known) {
        *cut = StackCut::unsupported;
        break;
      }
      if (bx_save != 0) {
        if (!stack.read(bx_save, &bx)) {
          *cut = StackCut::bad_stack;
          break;
        }
        bx_save = 0;
      }
      cfa = bx + offset;
    } else {  // cfa_rbp, cfa_at_rbp
      if (!fp_known) {
        *cut = StackCut::unsupported;
        break;
      }
      cfa = fp + offset;
      if (row->kind == RuleKind::cfa_at_rbp && !stack.read(cfa, &cfa)) {
        *cut = StackCut::bad_stack;
        break;
      }
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
    // The caller's rbx and rbp, the usual rules tested first; rbx first (its save may be
    // found from this frame's rbp). rbp is read at once: frame-pointer frames need it.
    const SavedRule rbx_rule = row->rbx(), rbp_rule = row->rbp();
    if (rbx_rule == SavedRule::at_cfa) {
      bx_save = cfa + static_cast<uintptr_t>(row->rbx_offset());
      bx_known = true;
    } else if (rbx_rule == SavedRule::at_rbp) {
      bx_save = fp + static_cast<uintptr_t>(row->rbx_offset());
      bx_known = fp_known;
    } else if (rbx_rule == SavedRule::lost) {
      bx_known = false;
    }
    if (rbp_rule == SavedRule::at_cfa || (rbp_rule == SavedRule::at_rbp && fp_known)) {
      uintptr_t base = rbp_rule == SavedRule::at_cfa ? cfa : fp;
      if (!stack.read(base + static_cast<uintptr_t>(row->rbp_offset()), &fp)) {
        *cut = StackCut::bad_stack;
        break;
      }
      fp_known = true;
    } else if (rbp_rule == SavedRule::lost) {
      fp_known = false;
    }  // at_rbp with rbp unknown: stays unknown
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
