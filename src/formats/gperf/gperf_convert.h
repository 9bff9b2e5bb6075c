// gperftools CPU profile <-> core::Profile, the way google/pprof converts, so that both
// tools agree on every file:
//  - sample types samples/count and cpu/nanoseconds; period = header period (us) x 1000;
//  - the leaf PC is kept as is, caller PCs minus one (a return address becomes an address
//    inside the call instruction); one location per distinct adjusted address;
//  - a leaf duplicated by the unwinder (second PC == first PC) is dropped;
//  - executable maps lines become mappings; adjacent pieces of one file are joined, the
//    main binary is moved first, and pprof's fix-ups for legacy mapping quirks applied;
//  - identical stacks are summed.
// One pprof heuristic is deliberately not copied: pprof drops the second frame of every
// stack when almost all stacks share it (a signal-handler artifact of gperftools before
// 2.0). With a modern profile of one hot call site it deletes real callers; tally keeps them.
#pragma once

#include <span>
#include <string>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"
#include "formats/gperf/gperf_file.h"

namespace tally::gperf {

// Streams straight from the file's bytes to a profile (no GperfFile in between), reporting
// progress on `bytes` to `on_progress` if given.
core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes,
                                           const std::string& source,
                                           core::Diagnostics& diagnostics,
                                           void (*on_progress)(uint64_t, void*) = nullptr,
                                           void* progress_context = nullptr);

core::Expected<core::Profile> to_profile(const GperfFile& file, const std::string& source,
                                         core::Diagnostics& diagnostics);

// The profile as a 64-bit little-endian gperftools file. What the format cannot carry
// (labels, extra sample types, build ids, symbol-only locations) is reported.
core::Expected<GperfFile> from_profile(const core::Profile& profile,
                                       core::Diagnostics& diagnostics);

}  // namespace tally::gperf
