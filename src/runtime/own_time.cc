#include "runtime/own_time.h"

#include <time.h>

#include "runtime/named_frame.h"

// The frames' functions, named as a report should print them.
asm(".text\n" TALLY_NAMED_FRAME_FUNCTION("[tally: sampling]")
        TALLY_NAMED_FRAME_FUNCTION("[tally: writing the profile]")
            TALLY_NAMED_FRAME_FUNCTION("[not profiled: process start-up]"));

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
