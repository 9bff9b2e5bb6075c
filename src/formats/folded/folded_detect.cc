// looks_like_folded: claims only text whose lines are almost all "frames COUNT", and never
// text that another format's reader should see first.
#include <algorithm>

#include "formats/folded/folded.h"
#include "formats/folded/folded_line.h"
#include "io/line_reader.h"

namespace tally::folded {

namespace {

constexpr size_t kWindow = 64 * 1024;
constexpr size_t kLongestLine = 1024 * 1024;

// gperftools, protobuf and the binary part of DCPI files all have control bytes early.
bool is_text(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
  });
}

// Lines in the style of callgrind's "key: value" headers and "fn=" lines.
bool is_key_line(std::string_view text) {
  size_t word = 0;
  while (word < text.size() && text[word] >= 'a' && text[word] <= 'z') ++word;
  if (word == 0 || word == text.size()) return false;
  if (text[word] == '=') return true;  // fn=, fl=, cfn=, calls=, jump=, ...
  return text[word] == ':' && (word + 1 == text.size() || text[word + 1] == ' ');
}

// Lines that mark another format outright: callgrind's headers and position lines (a
// callgrind file without headers may be mostly cost lines such as "16 3"), DCPI's
// version line.
bool is_other_format_marker(std::string_view text) {
  constexpr std::string_view markers[] = {
      "# callgrind format", "events:", "positions:", "version:", "creator:", "fn=", "fl=",
      "fi=", "fe=", "ob=", "cfn=", "cfl=", "cfi=", "cob=", "calls=", "version pdb-"};
  for (std::string_view m : markers)
    if (text.starts_with(m)) return true;
  return false;
}

// "STACK COUNT" with the stack not looking like a `perf script` sample header
// ("comm pid time:") nor indented like its frame lines.
bool is_folded_line(std::string_view raw, const LineParts& parts) {
  if (raw.front() == ' ' || raw.front() == '\t') return false;
  if (parts.stack.empty() || !is_digits(parts.count)) return false;
  if (parts.stack.back() == ':') return false;
  return !is_key_line(parts.text);
}

}  // namespace

bool looks_like_folded(std::span<const uint8_t> bytes) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (text.size() > kWindow) {
    // Only whole lines: the window may cut the last one in the middle of its count.
    // A single line longer than the window (a deep stack of long C++ names) is looked at
    // whole, up to a limit.
    size_t last_newline = text.rfind('\n', kWindow);
    if (last_newline == std::string_view::npos)
      last_newline = text.substr(0, kLongestLine).find('\n');
    if (last_newline == std::string_view::npos) return false;
    text = text.substr(0, last_newline + 1);
  }
  if (!is_text(text)) return false;

  uint64_t folded = 0, other = 0;
  io::LineReader lines(text);
  std::string_view line;
  LineParts parts;
  while (lines.next(line)) {
    const LineKind kind = cut_line(line, parts);
    if (kind == LineKind::blank) continue;
    if (is_other_format_marker(parts.text)) return false;
    if (kind == LineKind::comment) continue;
    if (is_folded_line(line, parts))
      ++folded;
    else
      ++other;
  }
  // "Most" lines: at least 10 folded lines for each other one.
  return folded > 0 && other * 10 <= folded;
}

}  // namespace tally::folded
