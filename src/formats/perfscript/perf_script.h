// Import of `perf script` text, the form in which perf's samples leave perf (and what
// speedscope's and FlameGraph's stackcollapse-perf importers read):
//
//   # header comment lines ('#')
//   COMM PID[/TID] [CPU] TIME: [PERIOD] EVENT[:MODIFIERS]: [ADDR SYMBOL[+0xOFF] (DSO)]
//   \tADDR SYMBOL[+0xOFF] (DSO)            one line per frame, leaf first
//   \tADDR SYMBOL (inlined)                an inlined frame at the address of the next frame
//   (blank line between samples)
//
// The profile has a sample type "samples" (count) and one per event, in order of first
// appearance (value: the period when printed, else 1); pid/tid/cpu/comm become labels (a
// lone number is the tid, as in perf's default field list); each distinct frame becomes a
// location whose lines are its inline chain, innermost first. time_nanos comes from
// "# captured on", read as UTC because perf prints local time without a zone;
// duration_nanos spans the first to the last sample time. Import only: tally does not
// write this format.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::perfscript {

// Conservative: optional '#' lines, then a sample header "COMM PID[/TID] [CPU] TIME:
// [PERIOD] EVENT:" followed by a tab-indented "ADDR ..." frame line or with the frame on
// the header line itself. Binary data (gperf, protobuf) and other text formats (DCPI,
// folded, callgrind) have no such line.
bool looks_like_perf_script(std::span<const uint8_t> bytes);

// Errors read "SOURCE: line N: expected ...".
core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes,
                                           const std::string& source,
                                           core::Diagnostics& diagnostics);

}  // namespace tally::perfscript
