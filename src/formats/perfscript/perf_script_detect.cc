// looks_like_perf_script: decides from the first sample alone, so that detection costs
// nothing on large files and claims only what really is `perf script` text.
#include <algorithm>

#include "core/error.h"
#include "formats/perfscript/perf_script.h"
#include "formats/perfscript/perf_script_lines.h"
#include "io/line_reader.h"

namespace tally::perfscript {

namespace {

// perf's header comment can be long (--header), and --show-*-events puts side-band lines
// before the first sample; past this the data is not what we look for.
constexpr size_t kLookAhead = 256 * 1024;

// Text only: binary formats (gperf, protobuf) have control bytes early on.
bool is_text(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 && c != '\t' && c != '\n' && c != '\r';
  });
}

bool is_frame(std::string_view text) {
  size_t b = text.find_first_not_of(" \t");
  if (b == std::string_view::npos) return false;
  text.remove_prefix(b);
  if (!is_address(text.substr(0, text.find_first_of(" \t")))) return false;
  try {
    (void)parse_frame_line(text, 0);
    return true;
  } catch (const core::FormatError&) {
    return false;
  }
}

}  // namespace

bool looks_like_perf_script(std::span<const uint8_t> bytes) {
  std::string_view all(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::string_view text = all.substr(0, kLookAhead);
  if (text.size() < all.size()) text = text.substr(0, text.rfind('\n') + 1);  // whole lines
  io::LineReader lines(text);
  std::string_view line;
  while (lines.next(line)) {
    if (!is_text(line)) return false;
    if (line.empty() || line.front() == '#') continue;
    std::optional<SampleHeader> header;
    try {
      header = parse_sample_header(line, 0);
    } catch (const core::FormatError&) {
      return false;
    }
    if (!header || !header->tid || header->time_nanos < 0) return false;
    if (header->side_band) continue;
    if (header->event.empty()) return false;
    // The frame: on the header line (no call chain) or on the next line, tab-indented.
    if (!header->rest.empty() && is_frame(header->rest)) return true;
    std::string_view next;
    return lines.next(next) && is_text(next) && !next.empty() && next.front() == '\t' &&
           is_frame(next);
  }
  return false;
}

}  // namespace tally::perfscript
