#include "store/epoch.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "formats/dcpi/dcpi_file.h"

namespace tally::store {

std::string epoch_name(int64_t unix_seconds) {
  return dcpi::Epoch::from_unix_seconds(unix_seconds, /*long_form=*/true).format();
}

std::optional<int64_t> epoch_seconds(std::string_view name) {
  if (name.size() != 14) return std::nullopt;
  auto e = dcpi::Epoch::parse(name);
  if (!e || e->second > 59) return std::nullopt;
  return e->unix_seconds();
}

std::string next_epoch_name(const std::vector<std::string>& existing, int64_t now) {
  int64_t start = now;
  for (const std::string& name : existing)
    if (auto s = epoch_seconds(name)) start = std::max(start, *s + 1);
  return epoch_name(start);
}

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

core::Expected<int64_t> parse_time(std::string_view text, int64_t now) {
  const auto bad = [&] {
    return core::Error{fmt::format("'{}' is not a time: expected YYYYMMDD[HH[MM[SS]]] or "
                                   "YYYY-MM-DD[THH:MM:SS] (UTC), or a duration ago such as 30m, "
                                   "2h, 7d", text)};
  };
  if (text.size() >= 2 && all_digits(text.substr(0, text.size() - 1))) {
    int64_t unit = 0;
    switch (text.back()) {
      case 's': unit = 1; break;
      case 'm': unit = 60; break;
      case 'h': unit = 3600; break;
      case 'd': unit = 86400; break;
      default: break;
    }
    if (unit != 0) {
      int64_t n = 0;
      auto digits = text.substr(0, text.size() - 1);
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (ec != std::errc() || end != digits.data() + digits.size() || n > INT64_MAX / unit / 2)
        return bad();
      return now - n * unit;
    }
  }
  std::string compact;
  if ((text.size() == 10 || text.size() == 19) && text[4] == '-') {
    // ISO: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (a space instead of T too).
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      const bool sep = i == 4 || i == 7 || i == 10 || i == 13 || i == 16;
      if (!sep) {
        if (c < '0' || c > '9') return bad();
        compact += c;
      } else if ((i < 10 && c != '-') || (i == 10 && c != 'T' && c != ' ') ||
                 (i > 10 && c != ':')) {
        return bad();
      }
    }
  } else if (all_digits(text) && text.size() >= 8 && text.size() <= 14 && text.size() % 2 == 0) {
    compact = std::string(text);
  } else {
    return bad();
  }
  // Fields left out are the start of the period named: 20250102 is midnight.
  compact.resize(14, '0');
  auto seconds = epoch_seconds(compact);
  if (!seconds) return bad();
  return *seconds;
}

}  // namespace tally::store
