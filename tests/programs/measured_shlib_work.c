/* libmeasuredshlib.so: the shared-library half of measured_shlib (lib_hot and lib_cold), so
 * that a profile's shares span an executable and a library it loads. */
#include <stdint.h>

#include "burn_body.h"

#define NOINLINE __attribute__((noinline, visibility("default")))

NOINLINE void lib_hot(uint64_t n) { BURN_BODY(n, 0x1f3); }
NOINLINE void lib_cold(uint64_t n) { BURN_BODY(n, 0x2e5); }
