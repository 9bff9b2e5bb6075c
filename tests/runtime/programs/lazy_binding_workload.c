/* ld.so's lazy binding under the CFI walk: calls the 512 functions of its library, linked
 * -z lazy, round after round. Each first call goes through the PLT into ld.so's
 * _dl_runtime_resolve_{xsavec,xsave,fxsave}, which realigns the stack and keeps its CFA in
 * rbx, then _dl_fixup, _dl_lookup_symbol_x, do_lookup_x. Run with LD_BIND_NOT=1 every
 * call binds again (the GOT is never updated), so most of the time is spent there.
 * Built -O2 -fomit-frame-pointer. Knows nothing of any profiler.
 *
 * usage: lazy_binding_workload SECONDS   (of the thread's CPU time) */
#include <stdio.h>
#include <stdlib.h>

#include "burn_cpu.h"
#include "lazy_binding_functions.h"

#define DECLARE(n) int lazy_##n(int x);
LAZY_FUNCTIONS(DECLARE)

NOINLINE int call_every_function(int x) {
#define CALL(n) x = lazy_##n(x) & 0xffff;
  LAZY_FUNCTIONS(CALL)
  return x;
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 0.5;
  double end = thread_cpu_seconds() + seconds;
  int x = 1;
  long rounds = 0;
  while (thread_cpu_seconds() < end) {
    x = call_every_function(x);
    ++rounds;
  }
  printf("%ld rounds, %d\n", rounds, x);
  return 0;
}
