/* What the measured workloads burn CPU with: BURN_BODY(n, salt) runs n steps of an LCG in
 * the caller's frame. The salt keeps each function's body distinct, so that no linker
 * folds two functions into one (the profiles must tell them apart). */
#ifndef TALLY_TESTS_PROGRAMS_BURN_BODY_H_
#define TALLY_TESTS_PROGRAMS_BURN_BODY_H_

#include <stdint.h>

static volatile uint64_t burn_body_sink;

#define BURN_BODY(n, salt)                                                              \
  do {                                                                                  \
    uint64_t x_ = burn_body_sink;                                                       \
    for (uint64_t i_ = 0; i_ < (n); ++i_) x_ = x_ * 6364136223846793005u + (salt) + i_; \
    burn_body_sink = x_;                                                                \
  } while (0)

#endif /* TALLY_TESTS_PROGRAMS_BURN_BODY_H_ */
