// The callers a frame-pointer walk skips. The kernel's walk of a user stack (-g fp, and the
// BPF off-CPU recorder's bpf_get_stackid) takes the sampled pc, then follows rbp; a leaf
// function that keeps no frame pointer (glibc's system call wrappers: read, clock_nanosleep)
// leaves rbp at its caller's caller's frame, so its caller, and any frameless function
// between, is missing. Given a few words copied from the top of the user stack, the CFI
// (.eh_frame) of the mapped files finds them: while a function's CFA is rsp + N, its return
// address is the word at CFA - 8 and its caller's rsp is the CFA. The walk stops at a
// function whose CFA is based on rbp (it keeps a frame pointer: the kernel's walk is right
// from there), at an address without CFI, or at a word past the copy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "collect/process_maps.h"
#include "collect/unwind_elf_cache.h"

namespace tally::collect {

class FramelessCallers {
 public:
  // Appends to `callers` the return addresses above the leaf at `pc` found in `words` (the
  // stack from the leaf's sp upward), innermost first; nothing when the leaf keeps a frame
  // pointer. `maps` is process `pid`'s address space. CFA rules are cached per process,
  // address-space generation and address: a stack seen again costs a hash lookup a frame.
  void recover(pid_t pid, const AddressSpace& maps, uint64_t pc, std::span<const uint64_t> words,
               std::vector<uint64_t>& callers);

  // The user frames of a frame-pointer walk (`walked`, leaf first) with `callers` (found by
  // recover for that leaf) put in after the leaf, appended to `out`. The walk's frames after
  // its leaf follow; a caller equal to the walk's second frame ends the callers there (the
  // walk had it), so that nothing is doubled.
  static void splice(std::span<const uint64_t> walked, std::span<const uint64_t> callers,
                     std::vector<uint64_t>& out);

 private:
  // CFA - sp of the code at `address` (a pc of the leaf, or a return address minus one),
  // or 0: stop there.
  int64_t stack_pointer_offset(pid_t pid, const AddressSpace& maps, uint64_t address);

  struct Key {
    pid_t pid;
    uint64_t generation;
    uint64_t address;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  std::unordered_map<Key, int64_t, KeyHash> offsets_;
  UnwindElfCache files_;
};

}  // namespace tally::collect
