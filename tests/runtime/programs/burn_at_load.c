/* Preloaded after libtally (LD_PRELOAD=libtally.so:libburn_at_load.so), so that the dynamic
 * loader runs this constructor before libtally's: it burns $BURN_AT_LOAD_SECONDS of CPU
 * (default 0.2) that no sample can see, the start-up a whole-run profile must still count. */
#include <stdlib.h>

#include "burn_cpu.h"

NOINLINE static void load_work(double seconds) { BURN(seconds); }

__attribute__((constructor)) static void burn_at_load(void) {
  const char* text = getenv("BURN_AT_LOAD_SECONDS");
  load_work(text != NULL ? atof(text) : 0.2);
}
