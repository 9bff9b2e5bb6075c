#include "formats/gperf/mapped_objects.h"

#include <fmt/format.h>

#include <optional>

#include "io/line_reader.h"

namespace tally::gperf {

namespace {

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_word(char c) {
  return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// A tiny cursor over one line.
struct Scan {
  std::string_view s;
  size_t i = 0;
  bool hex(uint64_t& out) {
    size_t begin = i;
    out = 0;
    while (i < s.size() && is_hex(s[i])) {
      if (i - begin == 16) return false;  // more than 64 bits
      char c = s[i++];
      unsigned d = c <= '9' ? unsigned(c - '0') : unsigned((c | 0x20) - 'a' + 10);
      out = out << 4 | d;
    }
    return i > begin;
  }
  bool dec() {
    size_t begin = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > begin;
  }
  bool ch(char c) {
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  }
  bool spaces() {
    size_t begin = i;
    while (i < s.size() && is_space(s[i])) ++i;
    return i > begin;
  }
};

std::optional<MapsLine> parse_maps_line(std::string_view line) {
  Scan sc{line};
  MapsLine m;
  uint64_t ignored;
  if (!sc.hex(m.start) || !sc.ch('-') || !sc.hex(m.limit) || !sc.spaces()) return std::nullopt;
  size_t perms_begin = sc.i;
  while (sc.i < line.size() && std::string_view("-rwxps").find(line[sc.i]) != std::string_view::npos)
    ++sc.i;
  if (sc.i == perms_begin) return std::nullopt;
  m.perms = std::string(line.substr(perms_begin, sc.i - perms_begin));
  if (!sc.spaces() || !sc.hex(m.offset) || !sc.spaces()) return std::nullopt;
  if (!sc.hex(ignored) || !sc.ch(':') || !sc.hex(ignored)) return std::nullopt;  // device
  if (!sc.spaces() || !sc.dec()) return std::nullopt;                           // inode
  if (sc.i < line.size() && !is_space(line[sc.i])) return std::nullopt;
  std::string_view path = line.substr(sc.i);
  while (!path.empty() && is_space(path.front())) path.remove_prefix(1);
  while (!path.empty() && is_space(path.back())) path.remove_suffix(1);
  m.path = std::string(path);
  return m;
}

std::string substitute_build(std::string_view path, std::string_view build) {
  static constexpr std::string_view kVar = "$build";
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    size_t at = path.find(kVar, i);
    if (at == std::string_view::npos) break;
    size_t after = at + kVar.size();
    out.append(path.substr(i, at - i));
    if (after == path.size() || !is_word(path[after])) out.append(build);
    else out.append(kVar);
    i = after;
  }
  out.append(path.substr(std::min(i, path.size())));
  return out;
}

}  // namespace

std::vector<MapsLine> parse_mapped_objects(std::string_view text) {
  std::vector<MapsLine> out;
  std::optional<std::string> build;
  io::LineReader lines(text);
  std::string_view line;
  while (lines.next(line)) {
    std::string_view trimmed = line;
    while (!trimmed.empty() && is_space(trimmed.front())) trimmed.remove_prefix(1);
    if (trimmed.starts_with("build=")) {
      build = std::string(trimmed.substr(6));
      continue;
    }
    auto m = parse_maps_line(line);
    if (!m) continue;
    if (build) m->path = substitute_build(m->path, *build);
    out.push_back(std::move(*m));
  }
  return out;
}

std::string format_maps_line(uint64_t start, uint64_t limit, std::string_view perms,
                             uint64_t offset, std::string_view path) {
  return fmt::format("{:08x}-{:08x} {} {:08x} 00:00 {:<11d} {}\n", start, limit, perms, offset, 0,
                     path);
}

}  // namespace tally::gperf
