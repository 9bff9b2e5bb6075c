// The signal-return trampoline in gperftools CPU profiles. Older profilers recorded, as the
// second frame of every stack, the return address the kernel pushed for the signal handler:
// the C library's trampoline (__restore_rt), not a caller of the interrupted code. pprof
// deletes any second frame that (nearly) every stack shares; that also deletes real callers
// when a profile has one hot call site. tally deletes the frame only when the evidence says
// it is the trampoline:
//  - shape (pprof's): the frame is the second of all records but at most records/32 of them
//    (counted after the leaf the unwinder duplicated is dropped);
//  - then, when the binary mapped at that address is at hand (BinaryInspector), the binary
//    decides: the address is in an FDE marked as a signal frame ('S' augmentation) or in a
//    function named like the trampoline (__restore_rt...). A binary that says otherwise
//    keeps the frame, whatever the profile suggests;
//  - without the binary, the profile decides: the frame lies in the mapping of a library
//    that holds the trampoline (libc, or libpthread before glibc 2.34, musl's libc, the
//    vDSO), and the leaves of the records sharing it lie in at least two mappings. A real
//    call site reaches leaves in two mappings only through a function pointer whose targets
//    are themselves leaves, which a profile where 31 in 32 records pass through it does not
//    show; the trampoline is under whatever the signal interrupted.
// At most one frame is removed (pprof removes up to two): the trampoline is one frame, and
// the signal handler's own frames are in the profile's drop_frames.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/profile.h"

namespace tally::gperf {

// A code address of the profile with the mapping it lies in, as the profile gives them.
struct MappedAddress {
  std::string_view file;
  uint64_t start = 0, limit = 0, offset = 0;
  uint64_t address = 0;  // as recorded: where the frame returns to (not minus one)
};

// What the binary mapped at an address says about it.
struct BinaryAnswer {
  enum class Kind {
    not_at_hand,   // no binary to look in (not found, or not the file that was mapped)
    signal_frame,  // the signal-return trampoline
    other_code,    // anything else
  };
  Kind kind = Kind::not_at_hand;
  std::string detail;  // what was found ("libc.so.6: __restore_rt, FDE marked 'S'"), or why none
};

using BinaryInspector = std::function<BinaryAnswer(const MappedAddress&)>;

// Whether `file` (a path or a name as /proc/PID/maps gives it) is a library that holds the
// signal-return trampoline: glibc's libc (and libpthread, which had its own copy before
// glibc 2.34), musl's libc, or the vDSO.
bool holds_signal_trampoline(std::string_view file);

// Finds the frame described above in `profile` (a gperftools profile being read, its
// locations already in their mappings; `records_by_second_frame[id]` = how many records
// have location `id` as their second frame, `records` = all records) and removes it when the
// evidence says so. Samples that become equal are merged. What was found goes to the
// profile's attributes: "gperf.signal_frames_removed" or, when pprof would remove a frame
// that tally keeps, "gperf.shared_frame_kept". `inspect` may be null: no binary at hand.
void remove_signal_frame(core::Profile& profile, std::span<const uint32_t> records_by_second_frame,
                         uint64_t records, const BinaryInspector* inspect);

}  // namespace tally::gperf
