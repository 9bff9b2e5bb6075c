// A shared library built without frame pointers (like Debian's) whose call chains end in
// a frameless leaf that samples itself: its registers, in perf's order, and a copy of its
// stack, as PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER deliver them. The DWARF
// unwinder's tests and benchmark unwind these samples and know the exact chain to expect.
#pragma once

#include <cstdint>

extern "C" {

struct UfSample {
  uint64_t regs[24];        // enum perf_event_x86_regs order; FLAGS and segments stay 0
  uint8_t* stack;           // in: where the stack is copied to
  uint64_t stack_capacity;  // in: its size
  uint64_t stack_limit;     // in: one past the stack's highest address (never read past)
  uint64_t stack_size;      // out: bytes copied from the stack pointer up
};

// uf_run -> uf_recurse x (depth + 1) -> uf_sort -> qsort (libc, no frame pointers) -> ...
// -> uf_compare (the comparator) -> uf_tail -(tail call)-> uf_leaf, which takes the sample
// on the first comparison. Returns a value that only keeps the calls honest.
int uf_run(UfSample* sample, int depth);

// uf_run_trap -> uf_trap_point, which executes int3; the SIGTRAP handler uf_on_trap
// (installed by the caller, see uf_trap_handler) calls uf_leaf: the sample's chain crosses
// a signal frame into a frameless function interrupted mid-body.
int uf_run_trap(UfSample* sample);
void uf_on_trap(int signal, void* info, void* context);

// uf_run_nocfi -> uf_nocfi_middle, a function with a frame pointer and no CFI at all
// (compiled without unwind tables), which calls uf_leaf directly.
int uf_run_nocfi(UfSample* sample);

// Burns CPU for real sampling: uf_spin -> uf_spin_sort -> qsort (libc) -> ... ->
// uf_spin_compare -> uf_burn, a frameless leaf loop where nearly every sample lands.
uint64_t uf_spin(uint64_t iterations_per_comparison);
uint64_t uf_burn(uint64_t iterations);
int uf_spin_compare(const void* a, const void* b);
uint64_t uf_spin_sort(uint64_t iterations_per_comparison);

// The chain's functions, for the tests to compare addresses against.
void uf_leaf(UfSample* sample);
void uf_tail(UfSample* sample);
int uf_compare(const void* a, const void* b);
int uf_sort(UfSample* sample);
int uf_recurse(UfSample* sample, int depth);
int uf_trap_point(int value);
int uf_nocfi_middle(UfSample* sample);
}
