// The signal handler's CFI walk: from the interrupted registers, each frame's rule is
// looked up in the published unwind index (unwind_index.h) and applied: CFA from rsp, rbp
// (a frame-pointer frame), rbx (ld.so's lazy-binding trampoline, which realigns the stack)
// or loaded from rbp - 8 (GCC's realigning prologue), the return address at CFA-8, rbp and
// rbx where the CFI saved them (the CFA of a frame in rbx needs the value its callees saved).
// Signal trampolines (__restore_rt) continue from the interrupted registers saved in the
// signal frame; PLT stubs use their CFA expression. A ucontext coroutine's stack ends at
// __start_context (makecontext's pushed return address); code that switches stacks
// (__longjmp, setcontext, vfork's return), and a sample in swapcontext or setcontext, ends the
// walk as a cut (StackCut::stack_switch). Every stack load is checked against
// the thread's stack bounds, and one outside them goes through process_vm_readv (a failed
// read, never a fault). No allocation, no lock: async-signal-safe.
#pragma once

#include "runtime/stack_cut.h"
#include "runtime/stack_walk.h"

namespace tally::runtime {

struct UnwindIndex;

// Fills pcs as walk_stack does (leaf pc, then return addresses). When the walk stops
// before the root, the last entry is stack_cut_frame(*cut) (room is kept for it).
int walk_stack_cfi(const UnwindIndex* index, const Registers& registers,
                   const StackBounds& bounds, uintptr_t* pcs, int max_depth, StackCut* cut);

}  // namespace tally::runtime
