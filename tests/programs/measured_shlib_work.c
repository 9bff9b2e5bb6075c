/* libmeasuredshlib.so: the shared-library half of measured_shlib (lib_hot and lib_cold), so
 * that a profile's shares span an executable and a library it loads. */
#include <stdint.h>

#define NOINLINE __attribute__((noinline, visibility("default")))

static volatile uint64_t sink;

/* Distinct constants keep the bodies different from each other and from the executable's. */
#define BURN_BODY(n, salt)                                                              \
  do {                                                                                  \
    uint64_t x_ = sink;                                                                 \
    for (uint64_t i_ = 0; i_ < (n); ++i_) x_ = x_ * 6364136223846793005u + (salt) + i_; \
    sink = x_;                                                                          \
  } while (0)

NOINLINE void lib_hot(uint64_t n) { BURN_BODY(n, 0x1f3); }
NOINLINE void lib_cold(uint64_t n) { BURN_BODY(n, 0x2e5); }
