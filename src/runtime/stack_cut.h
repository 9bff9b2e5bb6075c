// Why a CFI walk stopped before the thread's root (main's and start_thread's callers end
// with an undefined return address in their CFI). A cut stack gets one more, outermost,
// frame named for the reason, "[tally: stack cut: REASON]" (named_frame.h), so that any
// report shows it in place, and the session counts cut stacks by reason (printed when the
// profile is written; `tally cat --summary` counts the frames).
#pragma once

#include <cstdint>

namespace tally::runtime {

enum class StackCut : uint8_t {
  none,
  no_unwind_info,  // a pc outside every image's CFI (JIT code, a stale index)
  unsupported,     // a rule the compiled CFI does not model
  bad_stack,       // a load outside the stack, or unreadable
  no_progress,     // the CFA did not move up the stack
  too_deep,        // more frames than a stack holds
  stack_switch,    // code between two stacks: __longjmp, setcontext/swapcontext mid-switch,
                   // vfork's return (the CFA or return address in a register the walk lacks)
};
inline constexpr int kStackCutKinds = 7;

// A caller-position address inside the reason's frame function (one past its start, as a
// return address is: readers subtract one from callers' addresses).
uintptr_t stack_cut_frame(StackCut reason);
const char* stack_cut_name(StackCut reason);

}  // namespace tally::runtime
