// What the fuzz targets assert beyond "no crash": a broken invariant aborts, so that
// libFuzzer keeps the input that showed it.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                         \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "fuzz check failed: %s (%s)\n", what, #cond); \
      std::abort();                                                    \
    }                                                                  \
  } while (0)
