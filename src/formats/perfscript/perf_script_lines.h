// The lines of `perf script` output, one parser each. Views point into the caller's text.
// Parsers throw core::FormatError (with the line number they are given) for a line that is
// recognisably of their kind but malformed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tally::perfscript {

// "COMM PID[/TID] [CPU] TIME: [PERIOD] EVENT: [REST]". The fields are found around the
// time token ("digits.digits:"), because COMM may contain spaces and -F may drop fields.
struct SampleHeader {
  std::string_view comm;        // empty when not printed
  std::optional<int64_t> pid;   // only in the "PID/TID" form
  std::optional<int64_t> tid;   // a lone number is the tid (perf's default field list)
  std::optional<int64_t> cpu;   // "[002]"
  int64_t time_nanos = 0;
  std::optional<int64_t> period;
  std::string_view event;       // without the trailing ':'; empty when not printed
  std::string_view rest;        // after the event: the frame of a one-line sample, or other fields
  bool side_band = false;       // a PERF_RECORD_* line (--show-mmap-events ...), not a sample
};

// nullopt when the line has no "[PID] [CPU] TIME:" group, i.e. is no sample header.
std::optional<SampleHeader> parse_sample_header(std::string_view line, uint64_t line_number);

// "ADDR [SYMBOL[+0xOFF]] [(DSO)]", leading whitespace already removed.
struct FrameLine {
  uint64_t address = 0;
  std::string_view symbol;  // offset stripped; "" when not printed
  std::string_view dso;     // inside the parentheses; "" when not printed
  bool has_symbol = false;
  bool has_dso = false;     // true for "(inlined)" too
  bool inlined = false;     // "(inlined)" in place of the DSO
};

FrameLine parse_frame_line(std::string_view text, uint64_t line_number);

// True when `token` starts a frame: hexadecimal digits only.
bool is_address(std::string_view token);

// "  FILE:LINE", printed after a frame by -F +srcline; nullopt for anything else.
struct SourceLine {
  std::string_view file;  // "" for perf's "??"
  int64_t line = 0;
};
std::optional<SourceLine> parse_source_line(std::string_view line);

// A line as error messages quote it: at most 80 characters, control bytes as '?'.
std::string excerpt(std::string_view line);

// "Wed Aug 15 16:01:24 2018" (ctime, as in "# captured on: ..."), read as UTC since perf
// does not record the time zone; nanoseconds since the epoch.
std::optional<int64_t> parse_captured_on(std::string_view date);

}  // namespace tally::perfscript
