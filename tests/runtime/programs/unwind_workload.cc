// The CFI unwinder's workload, built -O2 -fomit-frame-pointer (frameless, as Debian's
// libraries are). Knows nothing of any profiler.
//
// usage: unwind_workload MODE [SECONDS] [LIBRARY]
//   recursion  main and two std::thread workers (their start goes through libstdc++.so's
//              execute_native_thread_routine) each run rounds of: a 42-deep mutual
//              recursion recurse_even/recurse_odd down to recursion_leaf; split_leaf
//              called from split_caller_twice (2 parts) and split_caller_once (1 part).
//   sort       comparators burning CPU inside std::sort (compare_for_std_sort) and
//              libc's qsort (compare_for_qsort), from sort_with_std / sort_with_qsort.
//   jit        jit_caller calls a loop copied into an anonymous executable mapping (code
//              without CFI, as a JIT's): its samples' stacks are cut, and say so.
//   dlopen     rounds of dlopen(LIBRARY), library_calls_back(dlopened_callback) (the
//              library's frame is on the stack during the samples), dlclose.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "burn_cpu.h"

extern "C" {

constexpr int kRecursionDepth = 42;

// Each returns something its caller adds to: no call here is a tail call.
NOINLINE uint64_t recursion_leaf(double seconds) {
  BURN(seconds);
  return burn_sink & 1;
}
NOINLINE uint64_t recurse_odd(int depth, double seconds);
NOINLINE uint64_t recurse_even(int depth, double seconds) {
  uint64_t result = depth == 0 ? recursion_leaf(seconds) : recurse_odd(depth - 1, seconds);
  return result + (burn_sink & 2);
}
NOINLINE uint64_t recurse_odd(int depth, double seconds) {
  uint64_t result = depth == 0 ? recursion_leaf(seconds) : recurse_even(depth - 1, seconds);
  return result + (burn_sink & 4);
}

NOINLINE uint64_t split_leaf(double seconds) {
  BURN(seconds);
  return burn_sink & 8;
}
NOINLINE uint64_t split_caller_twice(double seconds) { return split_leaf(2 * seconds) + (burn_sink & 16); }
NOINLINE uint64_t split_caller_once(double seconds) { return split_leaf(seconds) + (burn_sink & 32); }

NOINLINE void work_rounds(double seconds) {
  // 20 rounds of 0.5 (recursion) + 0.3 + 0.15 (split) parts.
  double part = seconds / 20 / 0.95;
  uint64_t total = 0;
  for (int round = 0; round < 20; ++round) {
    total += recurse_even(kRecursionDepth - 1, 0.5 * part);
    total += split_caller_twice(0.15 * part);
    total += split_caller_once(0.15 * part);
  }
  burn_sink = burn_sink + total;
}

NOINLINE int compare_for_std_sort_impl(int a, int b) {
  for (int i = 0; i < 300; ++i) burn_sink = burn_sink * 31 + static_cast<uint64_t>(i);
  return a < b;
}
NOINLINE bool compare_for_std_sort(int a, int b) { return compare_for_std_sort_impl(a, b) != 0; }
NOINLINE int compare_for_qsort(const void* a, const void* b) {
  for (int i = 0; i < 300; ++i) burn_sink = burn_sink * 31 + static_cast<uint64_t>(i);
  int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

NOINLINE void sort_with_std(std::vector<int> values) {
  std::sort(values.begin(), values.end(), compare_for_std_sort);
  burn_sink = burn_sink + static_cast<uint64_t>(values[0]);
}
NOINLINE void sort_with_qsort(std::vector<int> values) {
  qsort(values.data(), values.size(), sizeof(int), compare_for_qsort);
  burn_sink = burn_sink + static_cast<uint64_t>(values[0]);
}

NOINLINE void dlopened_callback(double seconds) { BURN(seconds); }

// mov %rdi,%rax; 1: dec %rax; jnz 1b; ret
NOINLINE int jit_caller(double seconds) {
  static const unsigned char loop[] = {0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3};
  void* code = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) return 1;
  memcpy(code, loop, sizeof loop);
  if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0) return 1;
  auto run = reinterpret_cast<void (*)(uint64_t)>(code);
  double end = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < end) run(10'000'000);
  burn_sink = burn_sink + 1;
  return 0;
}

NOINLINE int run_library_round(const char* library, double seconds) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  using Entry = void (*)(void (*)(double), double);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "library_calls_back"));
  if (entry == nullptr) return 1;
  entry(dlopened_callback, seconds);
  return dlclose(handle) == 0 ? 0 : 1;
}

}  // extern "C"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  double seconds = argc > 2 ? atof(argv[2]) : 1.0;
  if (mode == "recursion") {
    std::thread first(work_rounds, seconds), second(work_rounds, seconds);
    work_rounds(seconds);
    first.join();
    second.join();
    return 0;
  }
  if (mode == "sort") {
    std::vector<int> values(20000);
    uint64_t x = 88172645463325252ULL;
    for (int& value : values) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      value = static_cast<int>(x % 1000000);
    }
    double end = thread_cpu_seconds() + seconds;
    while (thread_cpu_seconds() < end) {
      sort_with_std(values);
      sort_with_qsort(values);
    }
    return 0;
  }
  if (mode == "jit") return jit_caller(seconds);
  if (mode == "dlopen" && argc > 3) {
    for (int round = 0; round < 5; ++round) {
      if (run_library_round(argv[3], seconds / 5) != 0) return 1;
    }
    return 0;
  }
  return 2;
}
