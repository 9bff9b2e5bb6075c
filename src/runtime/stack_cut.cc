#include "runtime/stack_cut.h"

#include "runtime/named_frame.h"

asm(".text\n" TALLY_NAMED_FRAME_FUNCTION("[tally: stack cut: no unwind info]")
        TALLY_NAMED_FRAME_FUNCTION("[tally: stack cut: unsupported unwind rule]")
            TALLY_NAMED_FRAME_FUNCTION("[tally: stack cut: unreadable stack]")
                TALLY_NAMED_FRAME_FUNCTION("[tally: stack cut: no progress]")
                    TALLY_NAMED_FRAME_FUNCTION("[tally: stack cut: too deep]")
                        TALLY_NAMED_FRAME_FUNCTION("[tally: stack cut: stack switch]"));

extern "C" {
void stack_cut_no_unwind_info() __asm__(TALLY_ASM_LABEL("[tally: stack cut: no unwind info]"));
void stack_cut_unsupported() __asm__(TALLY_ASM_LABEL("[tally: stack cut: unsupported unwind rule]"));
void stack_cut_bad_stack() __asm__(TALLY_ASM_LABEL("[tally: stack cut: unreadable stack]"));
void stack_cut_no_progress() __asm__(TALLY_ASM_LABEL("[tally: stack cut: no progress]"));
void stack_cut_too_deep() __asm__(TALLY_ASM_LABEL("[tally: stack cut: too deep]"));
void stack_cut_stack_switch() __asm__(TALLY_ASM_LABEL("[tally: stack cut: stack switch]"));
}

namespace tally::runtime {

uintptr_t stack_cut_frame(StackCut reason) {
  void (*function)() = nullptr;
  switch (reason) {
    case StackCut::none: return 0;
    case StackCut::no_unwind_info: function = &stack_cut_no_unwind_info; break;
    case StackCut::unsupported: function = &stack_cut_unsupported; break;
    case StackCut::bad_stack: function = &stack_cut_bad_stack; break;
    case StackCut::no_progress: function = &stack_cut_no_progress; break;
    case StackCut::too_deep: function = &stack_cut_too_deep; break;
    case StackCut::stack_switch: function = &stack_cut_stack_switch; break;
  }
  return reinterpret_cast<uintptr_t>(function) + 1;
}

const char* stack_cut_name(StackCut reason) {
  switch (reason) {
    case StackCut::none: return "none";
    case StackCut::no_unwind_info: return "no unwind info";
    case StackCut::unsupported: return "unsupported unwind rule";
    case StackCut::bad_stack: return "unreadable stack";
    case StackCut::no_progress: return "no progress";
    case StackCut::too_deep: return "too deep";
    case StackCut::stack_switch: return "stack switch";
  }
  return "?";
}

}  // namespace tally::runtime
