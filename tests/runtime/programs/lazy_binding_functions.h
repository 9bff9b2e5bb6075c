/* The 512 functions of lazy_binding_library.c (lazy_1000 ... lazy_1777, octal digits), as
 * an X-macro: LAZY_FUNCTIONS(M) expands M(n) once for each number n. */
#ifndef TALLY_TESTS_RUNTIME_LAZY_BINDING_FUNCTIONS_H_
#define TALLY_TESTS_RUNTIME_LAZY_BINDING_FUNCTIONS_H_

#define LAZY_8(M, n) M(n##0) M(n##1) M(n##2) M(n##3) M(n##4) M(n##5) M(n##6) M(n##7)
#define LAZY_64(M, n) \
  LAZY_8(M, n##0) LAZY_8(M, n##1) LAZY_8(M, n##2) LAZY_8(M, n##3) \
  LAZY_8(M, n##4) LAZY_8(M, n##5) LAZY_8(M, n##6) LAZY_8(M, n##7)
#define LAZY_FUNCTIONS(M) \
  LAZY_64(M, 10) LAZY_64(M, 11) LAZY_64(M, 12) LAZY_64(M, 13) \
  LAZY_64(M, 14) LAZY_64(M, 15) LAZY_64(M, 16) LAZY_64(M, 17)

#endif /* TALLY_TESTS_RUNTIME_LAZY_BINDING_FUNCTIONS_H_ */
