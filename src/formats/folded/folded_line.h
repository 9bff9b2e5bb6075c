// One line of a folded file cut into its parts: "STACK COUNT" or "STACK COUNT COUNT".
// Shared by the reader and the detector so that both agree on what a line is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tally::folded {

enum class LineKind { blank, comment, data };

struct LineParts {
  std::string_view text;     // the line without surrounding blanks
  std::string_view stack;    // everything before the last run of blanks ("" when none)
  std::string_view count;    // the last token
  // When the stack itself ends in blanks + digits (a differential line "STACK C1 C2"):
  std::string_view first_count;       // C1 ("" when the stack does not end in digits)
  std::string_view differential_stack;  // the stack without C1
};

// Blanks are spaces and tabs (and a stray '\r').
LineKind cut_line(std::string_view line, LineParts& parts);

bool is_digits(std::string_view token);
// A non-negative decimal integer that fits in int64.
bool parse_count(std::string_view token, int64_t& value);
// Why `token` is not a count, for an error message ("'1.5' is fractional: ...").
std::string count_problem(std::string_view token);

}  // namespace tally::folded
