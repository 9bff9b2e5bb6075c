// Unwinding sampled user stacks after the fact (tally record -g dwarf): the registers and
// the copy of the stack a sample carries (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER)
// are unwound with the CFI (.eh_frame, .debug_frame) of the ELF files the process had
// mapped, read with elfutils libdw (dwfl). Debian's libraries have no frame pointers, so
// this is what makes stacks through libc, libstdc++ and friends complete.
//
// Each process gets an offline Dwfl whose modules are its executable mappings' ELF files
// at their load bias ([vdso] is this process's own vdso image: the kernel maps the same
// one in every 64-bit process); libdw steps through .eh_frame / .debug_frame, and follows
// rbp where a frame has no CFI. The files are opened once per unwinder and shared by all
// processes (collect/unwind_elf_cache.h). One unwinder per thread: it is not thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collect/process_maps.h"
#include "collect/user_regs.h"

namespace tally::collect {

struct UnwindStats {
  uint64_t samples = 0;
  uint64_t frames = 0;
  uint64_t truncated = 0;  // stopped before the outermost frame (stack copy too short, no CFI)
  // Of the truncated samples: those whose last step needed memory past the end of the
  // stack copy (a bigger -g dwarf,SIZE would have gone further).
  uint64_t stack_ended = 0;
  // Callers found by following the frame pointer (rbp) where there was no CFI: code
  // outside any known ELF (JIT), or a function without an FDE.
  uint64_t frame_pointer_steps = 0;
  uint64_t images_opened = 0;   // distinct ELF files opened and parsed (shared by processes)
  uint64_t images_missing = 0;  // mapped files that could not be read (their frames have no CFI)
  uint64_t rebuilds = 0;        // per-process unwinder states built (maps changed)
};

class DwarfUnwinder {
 public:
  DwarfUnwinder();
  ~DwarfUnwinder();
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // Unwinds one sample of process `pid` whose address space is `maps`: `regs` at the
  // sample, `stack` the bytes copied from regs.sp() upward (the dyn_size part only).
  // Appends to `pcs`: regs.ip() first, then each caller's return address (not minus one),
  // outermost last; at most `max_frames`. ELF files and their CFI are cached across
  // samples (per file, keyed by build id or path); a process's state is rebuilt when its
  // maps' generation changes (and only when its executable mappings did). Only mappings
  // with `executable` set become modules. Nothing is appended for a kernel thread's sample
  // (abi NONE); a 32-bit sample gets its ip only. Never fails: what it could not do is
  // counted in stats().
  void unwind(pid_t pid, const AddressSpace& maps, const UserRegs& regs,
              std::span<const uint8_t> stack, std::vector<uint64_t>& pcs,
              size_t max_frames = 512);

  // Drops the state kept for an exited process.
  void forget(pid_t pid);
  const UnwindStats& stats() const { return stats_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  UnwindStats stats_;
};

}  // namespace tally::collect
