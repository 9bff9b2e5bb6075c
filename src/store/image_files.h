// One image's files in one epoch directory, DIR/<epoch>/<image-id>/: a DCPI v0 file per
// event (<event>.dcpi) and the call stacks (stacks.pb.gz). A flush merges the aggregate's
// new samples into what a file already holds; these functions compute the new bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/diagnostics.h"
#include "core/error.h"
#include "store/aggregate.h"

namespace tally::store {

inline constexpr std::string_view kStacksFileName = "stacks.pb.gz";

// "cpu-clock.dcpi": the event name with anything but [A-Za-z0-9._-] replaced by '_'.
std::string event_file_name(std::string_view event);

// What every DCPI file of a flush says about the machine.
struct MachineInfo {
  std::string platform = "unknown";  // "x86_64 Linux 6.1.0-18-amd64"
  uint64_t cpuspeed_mhz = 0;
  uint64_t cpu_count = 0;  // 0: the line is left out
};

// The DCPI file of `image`'s histogram of `event`, merged into `existing` (the file's
// current bytes; nullopt when there is none). Counts are summed; the period becomes the
// mean over both; header lines other programs added are kept. Fails when `existing` does
// not parse or belongs to another image or event, or a count overflows 32 bits.
core::Expected<std::string> merged_dcpi(const std::optional<std::string>& existing,
                                        const std::string& source, const Aggregate& aggregate,
                                        uint32_t image, size_t event, std::string_view epoch,
                                        const MachineInfo& machine);

// stacks.pb.gz of `image`: a pprof profile, one sample type per event ("cpu-clock"/"count":
// sample counts), frames laid out as image_profile.h says; merged into `existing`.
core::Expected<std::string> merged_stacks(const std::optional<std::string>& existing,
                                          const std::string& source, const Aggregate& aggregate,
                                          uint32_t image, std::string_view epoch);

}  // namespace tally::store
