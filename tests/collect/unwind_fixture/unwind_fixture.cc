// Built with -O2 -fomit-frame-pointer and noipa everywhere, so that each function is a
// real frame (or, for uf_tail, a real tail call) whatever the build type.
#include "unwind_fixture.h"

#include <cstdlib>

namespace {
UfSample* pending = nullptr;  // the sample the next comparison (or trap) takes
uint64_t burn_iterations = 0;  // what each comparison of uf_spin burns
uint64_t burned = 0;
}

extern "C" {

// A frameless leaf: it touches only call-clobbered registers, so g++ gives it no
// prologue and every callee-saved register still holds its caller's value.
__attribute__((noipa)) void uf_leaf(UfSample* sample) {
  asm volatile(
      "movq %%rax, 0(%%rdi)\n\t"
      "movq %%rbx, 8(%%rdi)\n\t"
      "movq %%rcx, 16(%%rdi)\n\t"
      "movq %%rdx, 24(%%rdi)\n\t"
      "movq %%rsi, 32(%%rdi)\n\t"
      "movq %%rdi, 40(%%rdi)\n\t"
      "movq %%rbp, 48(%%rdi)\n\t"
      "movq %%rsp, 56(%%rdi)\n\t"
      "leaq 0(%%rip), %%rax\n\t"  // the sampled address: the next instruction
      "movq %%rax, 64(%%rdi)\n\t"
      "movq %%r8, 128(%%rdi)\n\t"
      "movq %%r9, 136(%%rdi)\n\t"
      "movq %%r10, 144(%%rdi)\n\t"
      "movq %%r11, 152(%%rdi)\n\t"
      "movq %%r12, 160(%%rdi)\n\t"
      "movq %%r13, 168(%%rdi)\n\t"
      "movq %%r14, 176(%%rdi)\n\t"
      "movq %%r15, 184(%%rdi)\n\t"
      // Copy min(capacity, limit - rsp) bytes from rsp up, as the kernel does.
      "movq 208(%%rdi), %%rcx\n\t"
      "subq %%rsp, %%rcx\n\t"
      "movq 200(%%rdi), %%rax\n\t"
      "cmpq %%rax, %%rcx\n\t"
      "cmovaq %%rax, %%rcx\n\t"
      "movq %%rcx, 216(%%rdi)\n\t"
      "movq %%rsp, %%rsi\n\t"
      "movq 192(%%rdi), %%rdi\n\t"
      "rep movsb\n\t"
      : "+D"(sample)
      :
      : "rax", "rcx", "rsi", "memory", "cc");
}

__attribute__((noipa)) void uf_tail(UfSample* sample) {
  sample->stack_size = 0;
  uf_leaf(sample);  // a sibling call: jmp, no frame of its own left on the stack
}

__attribute__((noipa)) int uf_compare(const void* a, const void* b) {
  if (UfSample* sample = pending) {
    pending = nullptr;
    uf_tail(sample);
  }
  int x = *static_cast<const int*>(a);
  int y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

__attribute__((noipa)) int uf_sort(UfSample* sample) {
  int values[8] = {5, 3, 7, 1, 8, 2, 6, 4};
  pending = sample;
  qsort(values, 8, sizeof values[0], uf_compare);
  return values[0];
}

__attribute__((noipa)) int uf_recurse(UfSample* sample, int depth) {
  int result = depth > 0 ? uf_recurse(sample, depth - 1) : uf_sort(sample);
  asm volatile("" : "+r"(result));  // work after the call: no tail call, no loop
  return result + 1;
}

__attribute__((noipa)) int uf_run(UfSample* sample, int depth) {
  int result = uf_recurse(sample, depth);
  asm volatile("" : "+r"(result));
  return result * 2;
}

__attribute__((noipa)) void uf_on_trap(int, void*, void*) {
  if (UfSample* sample = pending) {
    pending = nullptr;
    uf_leaf(sample);
  }
  asm volatile("" ::: "memory");  // keeps the call to uf_leaf a call
}

__attribute__((noipa)) int uf_trap_point(int value) {
  asm volatile("int3" : "+r"(value));
  return value + 1;
}

__attribute__((noipa)) int uf_run_trap(UfSample* sample) {
  pending = sample;
  int result = uf_trap_point(41);
  asm volatile("" : "+r"(result));
  return result + 1;
}

__attribute__((noipa)) int uf_run_nocfi(UfSample* sample) {
  int result = uf_nocfi_middle(sample);
  asm volatile("" : "+r"(result));
  return result + 1;
}

__attribute__((noipa)) uint64_t uf_burn(uint64_t iterations) {
  uint64_t value = iterations;
  for (uint64_t i = 0; i < iterations; ++i) {
    value = value * 6364136223846793005u + 1442695040888963407u;
    asm volatile("" : "+r"(value));
  }
  return value;
}

__attribute__((noipa)) int uf_spin_compare(const void* a, const void* b) {
  burned += uf_burn(burn_iterations);
  int x = *static_cast<const int*>(a);
  int y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

__attribute__((noipa)) uint64_t uf_spin_sort(uint64_t iterations_per_comparison) {
  int values[8] = {5, 3, 7, 1, 8, 2, 6, 4};
  burn_iterations = iterations_per_comparison;
  qsort(values, 8, sizeof values[0], uf_spin_compare);
  return burned + static_cast<uint64_t>(values[0]);
}

__attribute__((noipa)) uint64_t uf_spin(uint64_t iterations_per_comparison) {
  uint64_t result = uf_spin_sort(iterations_per_comparison);
  asm volatile("" : "+r"(result));
  return result + 1;
}
}
