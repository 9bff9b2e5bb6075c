/* 512 distinct exported functions for lazy_binding_workload.c to bind lazily. */
#include "lazy_binding_functions.h"

#define DEFINE(n) \
  int lazy_##n(int x); \
  int lazy_##n(int x) { return x * 3 + n; }
LAZY_FUNCTIONS(DEFINE)
