#include "formats/perfscript/perf_script_lines.h"

#include <fmt/format.h>

#include <array>
#include <charconv>

#include "core/error.h"

namespace tally::perfscript {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_digit(c)) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// A whitespace-separated token of a line, by position, so that the text between tokens
// (COMM with its spaces, the rest after the event) can be cut out exactly.
struct Token {
  size_t begin = 0;
  size_t end = 0;
  bool found = false;
};

Token next_token(std::string_view line, size_t from) {
  size_t b = from;
  while (b < line.size() && is_blank(line[b])) ++b;
  if (b >= line.size()) return {};
  size_t e = b;
  while (e < line.size() && !is_blank(line[e])) ++e;
  return {b, e, true};
}

std::string_view text_of(std::string_view line, Token t) {
  return line.substr(t.begin, t.end - t.begin);
}

// "198792.736893:"
bool is_time(std::string_view s) {
  if (s.size() < 4 || s.back() != ':') return false;
  s.remove_suffix(1);
  size_t dot = s.find('.');
  return dot != std::string_view::npos && all_digits(s.substr(0, dot)) &&
         all_digits(s.substr(dot + 1));
}

bool is_signed_number(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return all_digits(s);
}

// "1234" or "1234/1240"
bool is_pid(std::string_view s) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) return is_signed_number(s);
  return is_signed_number(s.substr(0, slash)) && is_signed_number(s.substr(slash + 1));
}

// "[002]"
bool is_cpu(std::string_view s) {
  return s.size() >= 3 && s.front() == '[' && s.back() == ']' &&
         all_digits(s.substr(1, s.size() - 2));
}

bool is_event(std::string_view s) { return s.size() >= 2 && s.back() == ':'; }

int64_t parse_int64(std::string_view s, std::string_view what, uint64_t line_number) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size())
    core::fail_at_line(line_number, fmt::format("{} '{}' is not a number that fits in 64 bits",
                                                what, excerpt(s)));
  return value;
}

int64_t parse_time_nanos(std::string_view token, uint64_t line_number) {
  std::string_view s = token.substr(0, token.size() - 1);  // drop ':'
  size_t dot = s.find('.');
  int64_t seconds = parse_int64(s.substr(0, dot), "time", line_number);
  // Microseconds by default, nanoseconds with --ns: scale the fraction to 9 digits.
  std::string_view fraction = s.substr(dot + 1);
  int64_t nanos = 0;
  for (size_t i = 0; i < 9; ++i) nanos = nanos * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  int64_t total = 0;
  if (__builtin_mul_overflow(seconds, int64_t{1000000000}, &total) ||
      __builtin_add_overflow(total, nanos, &total))
    core::fail_at_line(line_number, fmt::format("time '{}' is out of range (more than 292 "
                                                "years in nanoseconds)", excerpt(token)));
  return total;
}

void parse_pid(std::string_view s, SampleHeader& h, uint64_t line_number) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) {
    h.tid = parse_int64(s, "thread id", line_number);
    return;
  }
  h.pid = parse_int64(s.substr(0, slash), "process id", line_number);
  h.tid = parse_int64(s.substr(slash + 1), "thread id", line_number);
}

// The position of the '(' matching the ')' at `close`, or npos.
size_t matching_open(std::string_view s, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (s[i] == ')') ++depth;
    else if (s[i] == '(' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// "func_a+0x24" -> "func_a"; "operator+" stays.
std::string_view strip_offset(std::string_view symbol) {
  size_t plus = symbol.rfind('+');
  if (plus == std::string_view::npos) return symbol;
  std::string_view off = symbol.substr(plus + 1);
  if (off.size() < 3 || off[0] != '0' || (off[1] != 'x' && off[1] != 'X')) return symbol;
  for (char c : off.substr(2))
    if (!is_hex_digit(c)) return symbol;
  return symbol.substr(0, plus);
}

}  // namespace

std::string excerpt(std::string_view line) {
  constexpr size_t kMax = 80;
  std::string out(line.substr(0, kMax));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  if (line.size() > kMax) out += "...";
  return out;
}

bool is_address(std::string_view token) {
  if (token.empty()) return false;
  for (char c : token)
    if (!is_hex_digit(c)) return false;
  return true;
}

std::optional<SampleHeader> parse_sample_header(std::string_view line, uint64_t line_number) {
  // Find the time token and the (at most two) tokens before it.
  Token before2, before1, time;
  for (Token t = next_token(line, 0); t.found; t = next_token(line, t.end)) {
    if (is_time(text_of(line, t))) {
      time = t;
      break;
    }
    before2 = before1;
    before1 = t;
  }
  if (!time.found) return std::nullopt;

  SampleHeader h;
  size_t comm_end = time.begin;
  Token pid_token = before1;
  if (before1.found && is_cpu(text_of(line, before1))) {
    std::string_view cpu = text_of(line, before1);
    h.cpu = parse_int64(cpu.substr(1, cpu.size() - 2), "cpu", line_number);
    comm_end = before1.begin;
    pid_token = before2;
  }
  if (pid_token.found && is_pid(text_of(line, pid_token))) {
    parse_pid(text_of(line, pid_token), h, line_number);
    comm_end = pid_token.begin;
  }
  h.comm = trim(line.substr(0, comm_end));
  h.time_nanos = parse_time_nanos(text_of(line, time), line_number);

  Token next = next_token(line, time.end);
  if (!next.found) return h;
  std::string_view first = text_of(line, next);
  if (first.starts_with("PERF_RECORD_")) {
    h.side_band = true;
    return h;
  }
  Token after = next_token(line, next.end);
  std::string_view second = after.found ? text_of(line, after) : std::string_view{};
  size_t rest_begin = next.begin;
  if (all_digits(first) && (is_event(second) || !after.found || is_address(second))) {
    h.period = parse_int64(first, "period", line_number);
    rest_begin = next.end;
    if (is_event(second)) {
      h.event = second.substr(0, second.size() - 1);
      rest_begin = after.end;
    }
  } else if (is_event(first)) {
    h.event = first.substr(0, first.size() - 1);
    rest_begin = next.end;
  }
  h.rest = trim(line.substr(rest_begin));
  return h;
}

FrameLine parse_frame_line(std::string_view text, uint64_t line_number) {
  FrameLine f;
  Token addr = next_token(text, 0);
  std::string_view address = addr.found ? text_of(text, addr) : std::string_view{};
  if (!is_address(address))
    core::fail_at_line(line_number, fmt::format("expected a frame 'ADDRESS SYMBOL (DSO)' with a "
                                                "hexadecimal address, found '{}'", excerpt(text)));
  auto [end, ec] = std::from_chars(address.data(), address.data() + address.size(), f.address, 16);
  if (ec != std::errc() || end != address.data() + address.size())
    core::fail_at_line(line_number, fmt::format("frame address '{}' is longer than 64 bits",
                                                address));

  std::string_view rest = trim(text.substr(addr.end));
  int depth = 0;
  for (char c : rest) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
  if (depth > 0)
    core::fail_at_line(line_number, fmt::format("unbalanced '(' in frame '{}': expected "
                                                "'SYMBOL (DSO)' (is the line cut short?)", excerpt(text)));
  // The DSO is the last parenthesised group, after a space; text after it (fields such as
  // "insn: ..." on a one-line sample) is not part of the frame.
  size_t close = rest.rfind(')');
  if (close != std::string_view::npos) {
    size_t open = matching_open(rest, close);
    if (open != std::string_view::npos && (open == 0 || is_blank(rest[open - 1]))) {
      f.has_dso = true;
      f.dso = rest.substr(open + 1, close - open - 1);
      f.inlined = f.dso == "inlined";
      rest = trim(rest.substr(0, open));
    }
  }
  if (!rest.empty()) {
    f.has_symbol = true;
    f.symbol = strip_offset(rest);
  }
  return f;
}

std::optional<SourceLine> parse_source_line(std::string_view line) {
  std::string_view s = trim(line);
  // "file.c:12", optionally followed by " (discriminator 3)".
  if (size_t paren = s.find(" ("); paren != std::string_view::npos) s = s.substr(0, paren);
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view number = s.substr(colon + 1);
  if (!all_digits(number) || number.size() > 18) return std::nullopt;
  SourceLine result;
  result.file = s.substr(0, colon);
  if (result.file == "??") result.file = {};
  std::from_chars(number.data(), number.data() + number.size(), result.line);
  return result;
}

std::optional<int64_t> parse_captured_on(std::string_view date) {
  static constexpr std::array<std::string_view, 7> kDays = {"Sun", "Mon", "Tue", "Wed",
                                                             "Thu", "Fri", "Sat"};
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::array<std::string_view, 5> parts;
  size_t count = 0;
  for (Token t = next_token(date, 0); t.found; t = next_token(date, t.end)) {
    if (count == parts.size()) return std::nullopt;
    parts[count++] = text_of(date, t);
  }
  if (count != parts.size()) return std::nullopt;
  bool known_day = false;
  for (auto d : kDays) known_day |= d == parts[0];
  int month = 0;
  for (size_t i = 0; i < kMonths.size(); ++i)
    if (kMonths[i] == parts[1]) month = static_cast<int>(i) + 1;
  const std::string_view clock = parts[3];
  if (!known_day || month == 0 || !all_digits(parts[2]) || parts[2].size() > 2 ||
      !all_digits(parts[4]) || parts[4].size() != 4 || clock.size() != 8 || clock[2] != ':' ||
      clock[5] != ':' || !all_digits(clock.substr(0, 2)) || !all_digits(clock.substr(3, 2)) ||
      !all_digits(clock.substr(6, 2)))
    return std::nullopt;
  auto number = [](std::string_view s) {
    int v = 0;
    for (char c : s) v = v * 10 + (c - '0');
    return v;
  };
  const int day = number(parts[2]), year = number(parts[4]);
  const int hour = number(clock.substr(0, 2)), minute = number(clock.substr(3, 2));
  const int second = number(clock.substr(6, 2));
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 || year < 1970 ||
      year > 2261)
    return std::nullopt;
  // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
  const int y = month <= 2 ? year - 1 : year;
  const int era = y / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = int64_t{era} * 146097 + doe - 719468;
  const int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second;
  return seconds * 1000000000;
}

}  // namespace tally::perfscript
