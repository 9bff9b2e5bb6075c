#include "runtime/own_time.h"

#include <time.h>

// The frames' functions, named as a report should print them (the assembler takes any name
// in quotes). Never called: only their addresses are recorded. `nop; ret` is valid on
// x86-64 and AArch64 alike.
#define TALLY_OWN_TIME_FUNCTION(name)          \
  ".globl \"" name "\"\n"                      \
  ".type \"" name "\", %function\n"            \
  "\"" name "\":\n"                            \
  "  nop\n"                                    \
  "  ret\n"                                    \
  ".size \"" name "\", .-\"" name "\"\n"

asm(".text\n" TALLY_OWN_TIME_FUNCTION("[tally: sampling]")
        TALLY_OWN_TIME_FUNCTION("[tally: writing the profile]")
            TALLY_OWN_TIME_FUNCTION("[not profiled: process start-up]"));

// The C++ names of those functions. GCC copies an asm label into its assembly as written,
// so a name with spaces needs the quotes; clang quotes the label itself and would take the
// quotes as part of the name.
#if defined(__clang__)
#define TALLY_ASM_LABEL(name) name
#else
#define TALLY_ASM_LABEL(name) "\"" name "\""
#endif

extern "C" {
void own_time_sampling() __asm__(TALLY_ASM_LABEL("[tally: sampling]"));
void own_time_writing() __asm__(TALLY_ASM_LABEL("[tally: writing the profile]"));
void own_time_start_up() __asm__(TALLY_ASM_LABEL("[not profiled: process start-up]"));
}

namespace tally::runtime {

uintptr_t own_time_frame(OwnTime kind) {
  switch (kind) {
    case OwnTime::sampling:
      return reinterpret_cast<uintptr_t>(&own_time_sampling);
    case OwnTime::writing:
      return reinterpret_cast<uintptr_t>(&own_time_writing);
    case OwnTime::start_up:
      return reinterpret_cast<uintptr_t>(&own_time_start_up);
  }
  return 0;
}

uint64_t process_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace tally::runtime
