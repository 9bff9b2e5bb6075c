// Stack collection for the signal handler: a frame-pointer walk that reads only inside the
// thread's own stack (bounds captured when the thread started), plus the one thing frame
// pointers miss most often: the caller of a frameless leaf (g++ keeps leaf functions
// frameless even with -fno-omit-frame-pointer), whose return address is at the stack
// pointer. No allocation, no locks, no dl_iterate_phdr: async-signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tally::runtime {

class MapsSnapshot;

struct StackBounds {
  uintptr_t low = 0;   // lowest address of the stack
  uintptr_t high = 0;  // one past the highest
  bool known() const { return high != 0; }
  // True when [address, address + bytes) lies inside.
  bool holds(uintptr_t address, size_t bytes) const {
    return address >= low && address < high && high - address >= bytes;
  }
};

// The calling thread's stack (unknown when pthread cannot tell). Not for a signal handler:
// pthread_getattr_np may allocate.
StackBounds current_thread_stack_bounds();

struct Registers {
  uintptr_t pc = 0;
  uintptr_t sp = 0;
  uintptr_t fp = 0;
  uintptr_t bx = 0;  // x86-64's rbx: a CFA may be kept in it (ld.so's lazy-binding trampoline)
};

// The interrupted registers of a signal handler's ucontext_t.
Registers registers_from_context(const void* ucontext);

// Fills pcs with the leaf pc then the return addresses of its callers (the gperftools
// order); returns how many. Where the stack pointer is not inside `bounds` (unknown bounds,
// or another stack) every read goes through process_vm_readv, at most 64 frames. `maps`
// (may be null) rejects values that point outside code. `interrupted`: the registers are those of
// code interrupted anywhere (a signal), so the leaf may be frameless.
int walk_stack(const Registers& registers, const StackBounds& bounds, const MapsSnapshot* maps,
               bool interrupted, uintptr_t* pcs, int max_depth);

// True when `address` follows a call instruction (read safely with process_vm_readv: the
// code may be unmapped at any moment by another thread's dlclose). A direct call must lead
// to code (per `maps`) or to a function that holds `callee_pc`.
bool follows_call(uintptr_t address, uintptr_t callee_pc, const MapsSnapshot* maps);

// Reads `bytes` at `address` with process_vm_readv: false, not a fault, where nothing is
// mapped. Async-signal-safe.
bool read_memory_safely(uintptr_t address, void* out, size_t bytes);

// The process id process_vm_readv needs (getpid is a syscall); set at start and after fork.
void set_walk_pid(int pid);

}  // namespace tally::runtime
