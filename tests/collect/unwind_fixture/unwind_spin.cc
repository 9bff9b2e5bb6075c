// unwind_spin [SECONDS]: burns CPU in the unwind fixture's leaf under libc's qsort for
// about SECONDS (default 2), for recording with perf or tally and comparing their
// unwinding of the same code (bench/unwind_vs_perf.sh).
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "unwind_fixture.h"

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  auto start = std::chrono::steady_clock::now();
  uint64_t result = 0, rounds = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    result += uf_spin(1'000'000);
    ++rounds;
  }
  std::printf("unwind_spin: %llu rounds (%llx)\n", static_cast<unsigned long long>(rounds),
              static_cast<unsigned long long>(result));
  return 0;
}
