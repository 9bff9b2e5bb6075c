#include "analyze/units.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <span>

#include "core/checked_math.h"

namespace tally::analyze {

namespace {

struct Unit {
  std::string_view name;
  std::array<std::string_view, 4> aliases;
  double factor;
};

struct UnitFamily {
  std::span<const Unit> units;
  const Unit* default_unit;
};

constexpr Unit kMemoryUnits[] = {
    {"B", {"b", "byte"}, 1},
    {"kB", {"kb", "kbyte", "kilobyte"}, 1024.0},
    {"MB", {"mb", "mbyte", "megabyte"}, 1024.0 * 1024},
    {"GB", {"gb", "gbyte", "gigabyte"}, 1024.0 * 1024 * 1024},
    {"TB", {"tb", "tbyte", "terabyte"}, 1024.0 * 1024 * 1024 * 1024},
    {"PB", {"pb", "pbyte", "petabyte"}, 1024.0 * 1024 * 1024 * 1024 * 1024},
};
constexpr Unit kTimeUnits[] = {
    {"ns", {"ns", "nanosecond"}, 1},
    {"us", {"μs", "us", "microsecond"}, 1e3},
    {"ms", {"ms", "millisecond"}, 1e6},
    {"s", {"s", "sec", "second"}, 1e9},
    {"hrs", {"hour", "hr"}, 3600e9},
};
constexpr Unit kSecond = {"s", {}, 1e9};

const UnitFamily kFamilies[] = {
    {kMemoryUnits, &kMemoryUnits[0]},
    {kTimeUnits, &kSecond},
};

// pprof's sniffUnit: lower case, a plural "s" dropped from names longer than two letters.
const Unit* find_unit(const UnitFamily& family, std::string_view name) {
  std::string key(name);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key.size() > 2 && key.back() == 's') key.pop_back();
  for (const Unit& u : family.units)
    for (std::string_view alias : u.aliases)
      if (!alias.empty() && alias == key) return &u;
  return nullptr;
}

bool convert(const UnitFamily& family, int64_t value, std::string_view from,
             std::string_view to, Scaled& out) {
  const Unit* from_unit = find_unit(family, from);
  if (!from_unit) return false;
  const double v = static_cast<double>(value) * from_unit->factor;
  if (to == "minimum" || to == "auto") {
    const Unit* best = nullptr;
    for (const Unit& u : family.units)
      if ((!best || u.factor >= best->factor) && v / u.factor >= 1.0) best = &u;
    if (!best) best = family.default_unit;
    out = {v / best->factor, std::string(best->name)};
    return true;
  }
  const Unit* to_unit = find_unit(family, to);
  if (!to_unit) to_unit = family.default_unit;
  out = {v / to_unit->factor, std::string(to_unit->name)};
  return true;
}

}  // namespace

Scaled scale(int64_t value, std::string_view from_unit, std::string_view to_unit) {
  if (value < 0) {
    Scaled s = scale(core::negate_saturating(value), from_unit, to_unit);
    s.value = -s.value;
    return s;
  }
  Scaled out;
  for (const UnitFamily& family : kFamilies)
    if (convert(family, value, from_unit, to_unit, out)) return out;
  out.value = static_cast<double>(value);
  if (to_unit == "count" || to_unit == "sample" || to_unit == "unit" || to_unit == "minimum" ||
      to_unit == "auto")
    return out;
  out.unit = std::string(to_unit);
  return out;
}

std::string scaled_label(int64_t value, std::string_view from_unit, std::string_view to_unit) {
  Scaled s = scale(value, from_unit, to_unit);
  // Unscaled, the number is the value itself: printed from the integer, which beyond 2^53
  // (a saturated total, 9223372036854775807) a double no longer holds exactly.
  if (value != 0 && s.value == static_cast<double>(value))
    return fmt::format("{}{}", value, s.unit);
  std::string number = fmt::format("{:.2f}", s.value);
  if (number.ends_with(".00")) number.resize(number.size() - 3);
  if (number == "0" || number == "-0") return "0";
  return number + s.unit;
}

std::string percentage(int64_t value, int64_t total) {
  double ratio = 0;
  if (total != 0) ratio = std::fabs(static_cast<double>(value) / static_cast<double>(total)) * 100;
  if (ratio >= 99.95 && ratio <= 100.05) return "  100%";
  if (ratio >= 1.0) return fmt::format("{:5.2f}%", ratio);
  // Go's %5.2g and C's agree: two significant digits, trailing zeros dropped.
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%5.2g%%", ratio);
  return buffer;
}

std::string select_output_unit(int64_t min_value, int64_t total, std::string_view sample_unit) {
  const int64_t max_value = total;
  if (min_value == 0) min_value = max_value;
  std::string unit = scale(min_value, sample_unit, "minimum").unit;
  const std::string max_unit = scale(max_value, sample_unit, "minimum").unit;
  // Units differ and the smallest value is under 1% of the total: use the larger unit
  // of 100x the smallest, so that it still shows as at least 0.01.
  if (unit != max_unit && static_cast<double>(min_value) * 100 < static_cast<double>(max_value))
    unit = scale(core::mul_saturating(100, min_value), sample_unit, "minimum").unit;
  return unit.empty() ? std::string(sample_unit) : unit;
}

}  // namespace tally::analyze
