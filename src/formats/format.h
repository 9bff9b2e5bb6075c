// Every profile format tally reads or writes, detection from content (never from the
// file name), and dispatch to the format's reader and writer.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/position_detail.h"
#include "core/profile.h"
#include "formats/gperf/signal_frames.h"
#include "io/input.h"

namespace tally::formats {

enum class Format { unknown, gperf, dcpi, pprof, perf_script, folded, callgrind };

std::string_view format_name(Format f);             // "gperf"
std::string_view format_description(Format f);      // "gperftools CPU profile"
std::optional<Format> parse_format_name(std::string_view name);
std::string readable_format_names();                // "gperf, dcpi, ..."
std::string writable_format_names();                // "gperf|dcpi|..."

// The format of `bytes` (already inflated if it was gzip), from its content.
Format detect(std::span<const uint8_t> bytes);

// Reads any supported format into the model; `detected` receives the format found.
// `binaries`, when given, looks at the binaries the profile names: the gperftools reader
// asks it whether a frame every stack shares is the signal trampoline (gperf/signal_frames.h).
// `detail` functions lets a reader keep one location per function (callgrind; the other
// formats read every position anyway): for reports by function only. `counts` then
// receives what the full read would have made (core/position_detail.h), when the reader
// kept one location per function; it is left alone otherwise.
core::Expected<core::Profile> read_profile(const io::Input& input, core::Diagnostics& diagnostics,
                                           Format* detected = nullptr,
                                           const gperf::BinaryInspector* binaries = nullptr,
                                           core::PositionDetail detail = core::PositionDetail::full,
                                           core::PositionCounts* counts = nullptr);
// The same, freeing the input's bytes as soon as they are no longer needed: what the
// command line uses, so that a big input and the model it becomes are not both resident.
// `canonical` false skips putting a pprof profile in canonical order (merging equal
// samples: a third of the read time of a big profile), for reports, which aggregate anyway.
core::Expected<core::Profile> read_profile(io::Input&& input, core::Diagnostics& diagnostics,
                                           Format* detected = nullptr, bool canonical = true,
                                           const gperf::BinaryInspector* binaries = nullptr,
                                           core::PositionDetail detail = core::PositionDetail::full,
                                           core::PositionCounts* counts = nullptr);

struct WriteOptions {
  // The sample type a one-value format writes (folded): a type name or an index;
  // empty: the format's default.
  std::string value;
  // A call-graph profile (callgrind) holds no stacks: writing it to a stack format is
  // refused unless this is set; then each self cost becomes a one-frame stack (reported).
  bool approximate = false;
  // callgrind output: "fn=(12) name" once then "fn=(12)"; "+4"/"-2"/"*" positions.
  bool compress_names = true;
  bool compress_positions = true;
};

// One output file; `name` is empty for formats that write a single file, else the name of
// this file inside the output directory (DCPI writes one file per image).
struct OutputFile {
  std::string name;
  std::string bytes;
};

// Writes the profile; what the format cannot hold is reported in `diagnostics`, and for
// formats with comments every diagnostic so far (reading included) is also kept as a
// comment in the output. Taken by value: move a big profile in to spare a copy.
core::Expected<std::vector<OutputFile>> write_profile(core::Profile profile, Format format,
                                                      core::Diagnostics& diagnostics,
                                                      const WriteOptions& options = {});

}  // namespace tally::formats
