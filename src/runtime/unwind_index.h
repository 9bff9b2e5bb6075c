// The unwind rules of every loaded image (executable, libraries, vDSO), compiled from
// their in-memory .eh_frame (found through PT_GNU_EH_FRAME), and from the .debug_frame of
// their file for functions .eh_frame does not cover (code built -g without unwind
// tables: debug_frame_file.h), into one address-sorted array
// of rows in memory of its own (mmap). Built outside the signal handler: when profiling
// starts, and by the service thread when the loader's counts of loads and unloads
// (dlpi_adds, dlpi_subs) changed: it looks every 100 ms, and at once when a handler met
// code outside the index (a library just dlopened). dlopen is not interposed: glibc finds
// the caller's RPATH and namespace from dlopen's return address, which would be libtally's.
// A sample in code loaded since the last build is cut ("no unwind info"); rows of an image
// unloaded since are harmless (every stack load is checked). A new index is published with one atomic store; the
// handler reads the current one between enter_index_reader and leave_index_reader, and an
// old index is unmapped only once no handler is reading.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/cfi_compiler.h"

namespace tally::runtime {

struct UnwindIndex {
  size_t count = 0;
  size_t mapped_bytes = 0;
  unsigned long long loads = 0;    // dl_iterate_phdr's dlpi_adds when built
  unsigned long long unloads = 0;  // dlpi_subs
  size_t images = 0;               // images with CFI
  size_t broken_images = 0;        // whose .eh_frame or .debug_frame did not compile to the end
  size_t debug_frame_images = 0;   // images with rows from .debug_frame
  // libc's swapcontext: its CFI describes the old stack after rsp became the new one, so
  // a sample in it is cut (StackCut::stack_switch) rather than walked on garbage. Also
  // setcontext: called by __start_context when a coroutine returns, whose CFI (the CIE's
  // default, CFA = rsp + 8) takes the next context's pointer above it for a return address.
  struct CodeRange {
    uint64_t start = 0, end = 0;
  };
  CodeRange context_switches[2];
  UnwindRow rows[1];               // `count` of them
};

// Rebuilds the index if the loaded images changed since the last build (or `force`).
// Not async-signal-safe (takes a lock, calls dl_iterate_phdr and mmap). False if memory
// for it could not be mapped.
bool refresh_unwind_index(bool force);

// fork: the parent holds the build lock across it (no index half-built, and no
// dl_iterate_phdr of ours under way, whose loader lock the child would inherit taken);
// the child gets the lock back free and keeps the parent's index (same mappings).
void lock_index_for_fork();
void unlock_index_after_fork_in_parent();
void reset_index_after_fork_in_child();
bool have_unwind_index();

// The handler's side. Async-signal-safe.
const UnwindIndex* enter_index_reader();
void leave_index_reader();
// The row whose range holds `address`, or nullptr.
const UnwindRow* find_unwind_row(const UnwindIndex& index, uint64_t address);

// The handler met a pc outside every image's rules: the service thread should look. True
// when this is news (the handler then wakes the service thread); cleared by a rebuild.
bool note_unknown_code();
bool unknown_code_noted();

}  // namespace tally::runtime
