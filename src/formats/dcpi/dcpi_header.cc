// The ASCII header grammar of dcpiformat(4), and the epoch time format.
#include <fmt/format.h>

#include <array>
#include <ctime>

#include "formats/dcpi/dcpi_file.h"

namespace tally::dcpi {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }
bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}
bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}
bool to_u64(std::string_view s, int base, uint64_t& out) {
  out = 0;
  for (char c : s) {
    unsigned d = c <= '9' ? unsigned(c - '0') : unsigned((c | 0x20) - 'a' + 10);
    if (out > (UINT64_MAX - d) / unsigned(base)) return false;
    out = out * unsigned(base) + d;
  }
  return true;
}

int days_from_civil(int y, int m, int d) {  // days since 1970-01-01, proleptic Gregorian
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int days_in_month(int y, int m) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[static_cast<size_t>(m - 1)];
}

struct FieldRule {
  std::string_view key;
  bool required;
  enum Kind { version, hex, digits, time, rest } kind;
};
constexpr FieldRule kRules[] = {
    {"version", true, FieldRule::version}, {"image", true, FieldRule::hex},
    {"epoch", true, FieldRule::time},      {"platform", true, FieldRule::rest},
    {"event", true, FieldRule::rest},      {"period", true, FieldRule::digits},
    {"tstart", true, FieldRule::hex},      {"tsize", true, FieldRule::digits},
    {"cpuspeed", true, FieldRule::digits}, {"cpuamask", false, FieldRule::hex},
    {"cpuimplv", false, FieldRule::digits}, {"cpucount", false, FieldRule::digits},
    {"path", false, FieldRule::rest},
};

}  // namespace

std::optional<Epoch> Epoch::parse(std::string_view text) {
  if (!all_digits(text) || (text.size() != 10 && text.size() != 14)) return std::nullopt;
  auto num = [&](size_t at, size_t n) {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  Epoch e;
  e.long_form = text.size() == 14;
  size_t at = 0;
  if (e.long_form) {
    e.year = num(0, 4);
    at = 4;
  } else {
    int yy = num(0, 2);
    e.year = yy < 69 ? 2000 + yy : 1900 + yy;  // POSIX strptime %y pivot
    at = 2;
  }
  e.month = num(at, 2);
  e.day = num(at + 2, 2);
  e.hour = num(at + 4, 2);
  e.minute = num(at + 6, 2);
  e.second = e.long_form ? num(at + 8, 2) : 0;
  if (e.month < 1 || e.month > 12 || e.day < 1 || e.day > days_in_month(e.year, e.month) ||
      e.hour > 23 || e.minute > 59 || e.second > 60)
    return std::nullopt;
  return e;
}

int64_t Epoch::unix_seconds() const {
  return int64_t(days_from_civil(year, month, day)) * 86400 + hour * 3600 + minute * 60 + second;
}

Epoch Epoch::from_unix_seconds(int64_t seconds, bool long_form) {
  time_t t = static_cast<time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  Epoch e;
  e.year = tm.tm_year + 1900;
  e.month = tm.tm_mon + 1;
  e.day = tm.tm_mday;
  e.hour = tm.tm_hour;
  e.minute = tm.tm_min;
  e.second = long_form ? tm.tm_sec : 0;
  e.long_form = long_form;
  return e;
}

std::string Epoch::format() const {
  if (long_form)
    return fmt::format("{:04d}{:02d}{:02d}{:02d}{:02d}{:02d}", year, month, day, hour, minute,
                       second);
  return fmt::format("{:02d}{:02d}{:02d}{:02d}{:02d}", year % 100, month, day, hour, minute);
}

std::optional<std::string_view> DcpiFile::value(std::string_view key) const {
  for (const HeaderLine& l : header)
    if (l.key == key) return l.value;
  return std::nullopt;
}

uint64_t DcpiFile::total_offsets() const {
  uint64_t n = 0;
  for (const Chunk& c : chunks)
    for (uint32_t v : c.counts) n += v != 0;
  return n;
}

uint64_t DcpiFile::total_samples() const {
  uint64_t n = 0;
  for (const Chunk& c : chunks)
    for (uint32_t v : c.counts) n += v;
  return n;
}

// Line numbers in messages are 1-based positions in file.header.
core::Expected<Fields> parse_fields(const DcpiFile& file, const std::string& source) {
  auto fail = [&](size_t line, const std::string& what) {
    return core::Error{fmt::format("{}: line {}: {}", source, line, what)};
  };
  Fields f;
  bool seen[std::size(kRules)] = {};
  for (size_t i = 0; i < file.header.size(); ++i) {
    const HeaderLine& l = file.header[i];
    const size_t line = i + 1;
    const FieldRule* rule = nullptr;
    size_t r = 0;
    for (; r < std::size(kRules); ++r)
      if (kRules[r].key == l.key) {
        rule = &kRules[r];
        break;
      }
    if (!rule) continue;  // unknown line: kept, not interpreted
    if (seen[r])
      return fail(line, fmt::format("second '{}' line; the header must have exactly one", l.key));
    seen[r] = true;
    const std::string& v = l.value;
    uint64_t n = 0;
    switch (rule->kind) {
      case FieldRule::version: {
        size_t dot = v.find('.');
        if (!v.starts_with("pdb-") || dot == std::string::npos ||
            !all_digits(std::string_view(v).substr(4, dot - 4)) ||
            !all_digits(std::string_view(v).substr(dot + 1)))
          return fail(line, "expected 'version pdb-<major>.<minor>', found 'version " + v + "'");
        uint64_t major = 0, minor = 0;
        if (!to_u64(std::string_view(v).substr(4, dot - 4), 10, major) ||
            !to_u64(std::string_view(v).substr(dot + 1), 10, minor) || major > 1000 ||
            minor > 1000000)
          return fail(line, "version number out of range: " + v);
        if (major == 1)
          return fail(line, "version " + v + ": major version 1 is not documented "
                            "(dcpiformat(4) describes only major version 0, pdb-0.06/0.07); "
                            "unsupported");
        if (major != 0)
          return fail(line, "version " + v + ": unsupported; tally reads major version 0");
        f.major = static_cast<unsigned>(major);
        f.minor = static_cast<unsigned>(minor);
        break;
      }
      case FieldRule::hex:
        if (!all_hex(v))
          return fail(line, fmt::format("expected hex digits after '{}', found '{}'", l.key, v));
        if (l.key == "tstart" && !to_u64(v, 16, n))
          return fail(line, "tstart does not fit in 64 bits: " + v);
        if (l.key == "image") f.image = v;
        else if (l.key == "tstart") f.tstart = n;
        else f.cpuamask = v;
        break;
      case FieldRule::digits:
        if (!all_digits(v))
          return fail(line, fmt::format("expected decimal digits after '{}', found '{}'", l.key, v));
        if (!to_u64(v, 10, n)) return fail(line, l.key + " does not fit in 64 bits: " + v);
        if (l.key == "period") f.period = n;
        else if (l.key == "tsize") f.tsize = n;
        else if (l.key == "cpuspeed") f.cpuspeed = n;
        else if (l.key == "cpuimplv") f.cpuimplv = n;
        else f.cpucount = n;
        break;
      case FieldRule::time: {
        auto e = Epoch::parse(v);
        if (!e)
          return fail(line, "expected the epoch as YYMMDDHHMM or YYYYMMDDHHMMSS (UTC), found '" +
                                v + "'");
        f.epoch = *e;
        break;
      }
      case FieldRule::rest:
        if (l.key == "platform") f.platform = v;
        else if (l.key == "event") f.event = v;
        else f.path = v;
        break;
    }
  }
  std::string missing;
  for (size_t r = 0; r < std::size(kRules); ++r)
    if (kRules[r].required && !seen[r]) missing += (missing.empty() ? "" : ", ") + std::string(kRules[r].key);
  if (!missing.empty())
    return fail(file.header.size() + 1, "the header lacks required line(s): " + missing);
  if (f.tsize > 0 && f.tstart > UINT64_MAX - f.tsize)
    return fail(file.header.size(), "tstart + tsize passes the end of the address space");
  return f;
}

bool looks_like_dcpi(std::span<const uint8_t> bytes) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()),
                        std::min<size_t>(bytes.size(), 64 * 1024));
  bool version = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) return false;
    std::string_view line = text.substr(pos, end - pos);
    size_t key_end = 0;
    while (key_end < line.size() && !is_space(line[key_end])) ++key_end;
    std::string_view key = line.substr(0, key_end);
    if (key.empty()) return false;
    for (char c : key)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return false;
    std::string_view rest = line.substr(key_end);
    if (key == "samples" && rest.find_first_not_of(" \t") == std::string_view::npos) return version;
    if (key == "version") {
      size_t v = rest.find_first_not_of(" \t");
      version = v != std::string_view::npos && rest.substr(v).starts_with("pdb-");
    }
    pos = end + 1;
  }
  return false;
}

}  // namespace tally::dcpi
