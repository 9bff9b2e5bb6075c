#include "formats/folded/folded_line.h"

#include <limits>

namespace tally::folded {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Splits "HEAD<blanks>TAIL" at the last run of blanks; false when there is none.
bool split_last_token(std::string_view s, std::string_view& head, std::string_view& tail) {
  size_t end = s.size();
  while (end > 0 && !is_blank(s[end - 1])) --end;
  if (end == 0) return false;
  tail = s.substr(end);
  size_t head_end = end;
  while (head_end > 0 && is_blank(s[head_end - 1])) --head_end;
  head = s.substr(0, head_end);
  return true;
}

bool is_fraction(std::string_view t) {
  size_t dot = t.find('.');
  if (dot == std::string_view::npos) return false;
  std::string_view whole = t.substr(0, dot), part = t.substr(dot + 1);
  return (whole.empty() || is_digits(whole)) && (part.empty() || is_digits(part)) &&
         !(whole.empty() && part.empty());
}

}  // namespace

bool is_digits(std::string_view token) {
  if (token.empty()) return false;
  for (char c : token)
    if (c < '0' || c > '9') return false;
  return true;
}

bool parse_count(std::string_view token, int64_t& value) {
  if (!is_digits(token)) return false;
  constexpr int64_t max = std::numeric_limits<int64_t>::max();
  int64_t v = 0;
  for (char c : token) {
    const int digit = c - '0';
    if (v > (max - digit) / 10) return false;
    v = v * 10 + digit;
  }
  value = v;
  return true;
}

std::string count_problem(std::string_view token) {
  const std::string quoted = "'" + std::string(token) + "'";
  if (is_digits(token)) return quoted + " is too large for a 64-bit count";
  if (is_fraction(token))
    return quoted + " is fractional; tally keeps integer counts only (scale the counts to integers)";
  if (token.size() > 1 && token[0] == '-' && (is_digits(token.substr(1)) || is_fraction(token.substr(1))))
    return quoted + " is negative";
  return quoted + " is not a count (a non-negative integer)";
}

LineKind cut_line(std::string_view line, LineParts& parts) {
  parts = LineParts{};
  parts.text = trim(line);
  if (parts.text.empty()) return LineKind::blank;
  if (parts.text.front() == '#') return LineKind::comment;
  if (!split_last_token(parts.text, parts.stack, parts.count)) {
    parts.count = parts.text;
    return LineKind::data;
  }
  std::string_view head, tail;
  if (split_last_token(parts.stack, head, tail) && is_digits(tail) && !head.empty()) {
    parts.first_count = tail;
    parts.differential_stack = head;
  }
  return LineKind::data;
}

}  // namespace tally::folded
