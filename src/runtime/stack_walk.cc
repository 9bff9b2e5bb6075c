#include "runtime/stack_walk.h"

#include <pthread.h>
#include <sys/uio.h>
#include <ucontext.h>

#include <atomic>
#include <cstring>

#include "runtime/maps_snapshot.h"

namespace tally::runtime {
namespace {

constinit std::atomic<int> walk_pid{0};

constexpr uintptr_t kLowestCodeAddress = 4096;
// A direct call's target and the pc of the function it called: one function, so close.
constexpr uintptr_t kMaxFunctionSize = 1 << 20;

bool read_memory(uintptr_t address, void* out, size_t bytes) {
  iovec local{out, bytes};
  iovec remote{reinterpret_cast<void*>(address), bytes};
  return process_vm_readv(walk_pid.load(std::memory_order_relaxed), &local, 1, &remote, 1, 0) ==
         static_cast<ssize_t>(bytes);
}

// Length of an FF /2 (indirect near call) instruction from its ModRM (and SIB) byte;
// `available` bytes can be read from `modrm_and_after`.
size_t indirect_call_length(const unsigned char* modrm_and_after, size_t available) {
  unsigned modrm = modrm_and_after[0];
  unsigned mod = modrm >> 6;
  unsigned rm = modrm & 7;
  size_t length = 2;  // opcode + ModRM
  if (mod == 3) return length;
  if (rm == 4) {
    if (available < 2) return 0;
    length += 1;  // SIB
    if (mod == 0 && (modrm_and_after[1] & 7) == 5) length += 4;
  }
  if (mod == 1) length += 1;
  if (mod == 2) length += 4;
  if (mod == 0 && rm == 5) length += 4;  // rip-relative
  return length;
}

// `value` is not a plausible code address according to the snapshot.
bool outside_code(uintptr_t value, const MapsSnapshot* maps) {
  if (value < kLowestCodeAddress) return true;
  if (maps == nullptr) return false;
  const MapRange* range = maps->find(value);
  // Not in the snapshot: mapped since (dlopen); give it the benefit of the doubt.
  return range != nullptr && !range->executable;
}

// A thread whose stack bounds are not known (one libtally did not see start), or running on
// another stack (sigaltstack, a coroutine's): the same frame-pointer walk, every read
// through process_vm_readv, so that a wild frame pointer costs a failed read, not a fault.
int walk_unknown_stack(const Registers& registers, const MapsSnapshot* maps, uintptr_t* pcs,
                       int max_depth) {
  constexpr int kMaxUnknownFrames = 64;
  constexpr uintptr_t kMaxStackSpan = 8 << 20;
  int depth = 0;
  uintptr_t frame = registers.fp;
  uintptr_t floor = registers.sp;
  uintptr_t ceiling = registers.sp + kMaxStackSpan;
  while (depth < max_depth && depth < kMaxUnknownFrames) {
    if (frame < floor || frame % sizeof(uintptr_t) != 0 || frame > ceiling - 2 * sizeof(uintptr_t)) break;
    uintptr_t words[2];
    if (!read_memory(frame, words, sizeof words)) break;
    if (outside_code(words[1], maps)) break;
    pcs[depth++] = words[1];
    if (words[0] <= frame) break;
    floor = frame + 2 * sizeof(uintptr_t);
    frame = words[0];
  }
  return depth;
}

}  // namespace

StackBounds current_thread_stack_bounds() {
  StackBounds bounds;
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return bounds;
  void* address = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attributes, &address, &size) == 0 && address != nullptr) {
    bounds.low = reinterpret_cast<uintptr_t>(address);
    bounds.high = bounds.low + size;
  }
  pthread_attr_destroy(&attributes);
  return bounds;
}

bool read_memory_safely(uintptr_t address, void* out, size_t bytes) {
  return read_memory(address, out, bytes);
}

void set_walk_pid(int pid) { walk_pid.store(pid, std::memory_order_relaxed); }

Registers registers_from_context(const void* ucontext) {
  Registers registers;
#if defined(__x86_64__)
  const auto* context = static_cast<const ucontext_t*>(ucontext);
  registers.pc = static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RIP]);
  registers.sp = static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RSP]);
  registers.fp = static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RBP]);
  registers.bx = static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RBX]);
#elif defined(__aarch64__)
  const auto* context = static_cast<const ucontext_t*>(ucontext);
  registers.pc = static_cast<uintptr_t>(context->uc_mcontext.pc);
  registers.sp = static_cast<uintptr_t>(context->uc_mcontext.sp);
  registers.fp = static_cast<uintptr_t>(context->uc_mcontext.regs[29]);
#else
#error "libtally: unsupported architecture"
#endif
  return registers;
}

bool follows_call(uintptr_t address, uintptr_t callee_pc, const MapsSnapshot* maps) {
#if defined(__x86_64__)
  if (outside_code(address, maps)) return false;
  unsigned char before[8];
  if (!read_memory(address - sizeof before, before, sizeof before)) return false;
  // call rel32: E8 + 4 bytes.
  if (before[3] == 0xE8) {
    int32_t displacement;
    memcpy(&displacement, before + 4, sizeof displacement);
    uintptr_t target = address + static_cast<uintptr_t>(static_cast<intptr_t>(displacement));
    if (target <= callee_pc && callee_pc - target < kMaxFunctionSize) return true;
    if (maps != nullptr) {
      const MapRange* range = maps->find(target);
      if (range != nullptr && range->executable) return true;
    }
  }
  // call *r/m64: FF /2, 2 to 7 bytes long.
  for (size_t length = 2; length <= 7; ++length) {
    const unsigned char* opcode = before + sizeof before - length;
    if (opcode[0] != 0xFF || ((opcode[1] >> 3) & 7) != 2) continue;
    if (indirect_call_length(opcode + 1, length - 1) == length) return true;
  }
  return false;
#else
  (void)callee_pc;
  return !outside_code(address, maps);
#endif
}

int walk_stack(const Registers& registers, const StackBounds& bounds, const MapsSnapshot* maps,
               bool interrupted, uintptr_t* pcs, int max_depth) {
  if (max_depth <= 0) return 0;
  int depth = 0;
  pcs[depth++] = registers.pc;
  if (!bounds.holds(registers.sp, sizeof(uintptr_t))) {
    return depth + walk_unknown_stack(registers, maps, pcs + depth, max_depth - depth);
  }

  // A frameless leaf (or any function before its frame is set up) keeps its return address
  // at the stack pointer, and the frame pointer still belongs to its caller's frame.
  uintptr_t at_sp = *reinterpret_cast<const uintptr_t*>(registers.sp);
  uintptr_t leaf_caller = 0;
  if (interrupted && depth < max_depth && follows_call(at_sp, registers.pc, maps)) {
    leaf_caller = at_sp;
    pcs[depth++] = at_sp;
  }

  uintptr_t frame = registers.fp;
  uintptr_t floor = registers.sp;
  while (depth < max_depth) {
    if (frame < floor || frame % sizeof(uintptr_t) != 0 ||
        !bounds.holds(frame, 2 * sizeof(uintptr_t))) {
      break;
    }
    const auto* words = reinterpret_cast<const uintptr_t*>(frame);
    uintptr_t next = words[0];
    uintptr_t return_address = words[1];
    if (outside_code(return_address, maps)) break;
    // The frame pointer chain may start at the frame whose return address the leaf
    // check already found (the leaf was interrupted after `pop %rbp`).
    if (!(depth == 2 && return_address == leaf_caller)) pcs[depth++] = return_address;
    if (next <= frame) break;
    floor = frame + 2 * sizeof(uintptr_t);
    frame = next;
  }
  return depth;
}

}  // namespace tally::runtime
