// Compiled with a frame pointer and without any unwind tables (-fno-asynchronous-unwind-tables
// -fno-unwind-tables -fno-exceptions -g0): the unwinder finds no CFI here and must follow rbp.
#include "unwind_fixture.h"

extern "C" __attribute__((noipa)) int uf_nocfi_middle(UfSample* sample) {
  volatile int local = 3;
  uf_leaf(sample);
  return local + 1;
}
