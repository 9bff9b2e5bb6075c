// looks_like_callgrind: KCachegrind's test ("events:" at the start of a line early in the
// file), plus the first line "# callgrind format" and a first header line "version: N" or
// "creator:" (valgrind puts them first). Only text is looked at: binary formats have
// control bytes early, and the other text formats (folded stacks, perf script, DCPI) never
// have a line starting with these keys.
#include <algorithm>

#include "formats/callgrind/callgrind.h"

namespace tally::callgrind {

namespace {

constexpr size_t kWindow = 8 * 1024;

bool is_text(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
  });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "version: 1": a number after the key (DCPI's "version pdb-0.07" has no colon).
bool is_version_line(std::string_view line) {
  if (!line.starts_with("version:")) return false;
  line = trim(line.substr(8));
  return !line.empty() && line.front() >= '0' && line.front() <= '9';
}

// "events: Ir Dr": the key, then at least one name.
bool is_events_line(std::string_view line) {
  return line.starts_with("events:") && !trim(line.substr(7)).empty();
}

}  // namespace

bool looks_like_callgrind(std::span<const uint8_t> bytes) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), std::min(bytes.size(), kWindow));
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  if (!is_text(text)) return false;
  bool first_line = true, first_key = true;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    // A line cut by the window counts only if it is the whole input.
    if (nl == std::string_view::npos && bytes.size() > kWindow) break;
    const std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const std::string_view line = trim(raw);
    if (first_line && line == "# callgrind format") return true;
    first_line = false;
    if (line.empty() || line.front() == '#') continue;
    if (raw.front() != ' ' && raw.front() != '\t') {
      if (is_events_line(line)) return true;
      if (first_key && (is_version_line(line) || line.starts_with("creator:"))) return true;
    }
    first_key = false;
  }
  return false;
}

}  // namespace tally::callgrind
