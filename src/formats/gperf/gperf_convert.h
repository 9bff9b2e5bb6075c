// gperftools CPU profile <-> core::Profile, the way google/pprof converts, so that both
// tools agree on every file:
//  - sample types samples/count and cpu/nanoseconds; period = header period (us) x 1000;
//  - the leaf PC is kept as is, caller PCs minus one (a return address becomes an address
//    inside the call instruction); one location per distinct adjusted address;
//  - a leaf duplicated by the unwinder (second PC == first PC) is dropped;
//  - executable maps lines become mappings; adjacent pieces of one file are joined, the
//    main binary is moved first, and pprof's fix-ups for legacy mapping quirks applied;
//  - identical stacks are summed;
//  - the signal-return trampoline that older profilers recorded as every stack's second
//    frame is removed, but only where the evidence says it is the trampoline: pprof removes
//    any second frame (nearly) every stack shares, real callers included (signal_frames.h).
#pragma once

#include <span>
#include <string>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"
#include "formats/gperf/gperf_file.h"
#include "formats/gperf/signal_frames.h"

namespace tally::gperf {

struct ReadOptions {
  // Looks at the binary mapped at a shared second frame (signal_frames.h); null: no binary
  // at hand, the profile's own evidence decides.
  const BinaryInspector* binaries = nullptr;
  // Progress on the file's bytes, if given.
  void (*on_progress)(uint64_t done, void* context) = nullptr;
  void* progress_context = nullptr;
};

// Streams straight from the file's bytes to a profile (no GperfFile in between).
core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes,
                                           const std::string& source,
                                           core::Diagnostics& diagnostics,
                                           const ReadOptions& options = {});

core::Expected<core::Profile> to_profile(const GperfFile& file, const std::string& source,
                                         core::Diagnostics& diagnostics,
                                         const BinaryInspector* binaries = nullptr);

// The profile as a 64-bit little-endian gperftools file. What the format cannot carry
// (labels, extra sample types, build ids, symbol-only locations) is reported.
core::Expected<GperfFile> from_profile(const core::Profile& profile,
                                       core::Diagnostics& diagnostics);

}  // namespace tally::gperf
