/* Loaded and unloaded by unwind_workload's dlopen mode: its frame (frameless, -O2
 * -fomit-frame-pointer) sits between the program's frames while samples are taken. */
#include <stdint.h>

static volatile uint64_t calls;

__attribute__((noinline)) void library_calls_back(void (*callback)(double), double seconds) {
  callback(seconds);
  calls = calls + 1; /* not a tail call: the frame stays on the stack */
}
