#include "web/query.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

namespace tally::web {

namespace {

constexpr std::array<std::pair<std::string_view, Endpoint>, 9> kEndpoints{{
    {"/api/meta", Endpoint::meta},
    {"/api/top", Endpoint::top},
    {"/api/flame", Endpoint::flame},
    {"/api/peek", Endpoint::peek},
    {"/api/source", Endpoint::source},
    {"/api/disasm", Endpoint::disasm},
    {"/api/diff", Endpoint::diff},
    {"/api/db", Endpoint::db},
    {"/api/timeline", Endpoint::timeline},
}};

bool takes_function(Endpoint e) {
  return e == Endpoint::peek || e == Endpoint::source || e == Endpoint::disasm;
}

bool is_regex_param(std::string_view name) {
  return name == "focus" || name == "ignore" || name == "hide" || name == "show" || name == "f";
}

// The label filters may be given more than once (all focus filters must match).
bool is_label_param(std::string_view name) { return name == "label_focus" || name == "label_ignore"; }

// The most label filters one request may give.
constexpr size_t kMaxLabelFilters = 16;

bool known_param(Endpoint endpoint, ServeMode mode, std::string_view name) {
  if (name == "si" || name == "granularity" || name == "side" || name == "focus" ||
      name == "ignore" || name == "hide" || name == "show" || name == "time_range" ||
      is_label_param(name))
    return true;
  if (name == "f") return takes_function(endpoint);
  if (name == "window") return endpoint == Endpoint::timeline;
  if (name == "epoch" || name == "epoch_to" || name == "image" || name == "event")
    return mode == ServeMode::db;
  if (name == "base_epoch" || name == "base_epoch_to")
    return mode == ServeMode::db && endpoint == Endpoint::diff;
  return false;
}

// Printable in an error message: control bytes escaped, cut short.
std::string quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  if (text.size() > 64) out += "...";
  return out + "'";
}

// std::regex (libstdc++) builds one automaton state per repetition of a bounded
// quantifier and reads a number's digits into a long without a check: "(a{1000}){1000}"
// would take gigabytes, "\\99999999999999999999" overflows. Refused before compiling:
// a backreference of more than two digits, a bound over kMaxRepeat, or bounds whose
// product passes kMaxRepeatProduct. A '{' inside a bracket is counted too (harmless).
constexpr uint64_t kMaxRepeat = 1000;
constexpr uint64_t kMaxRepeatProduct = 10000;

std::string regex_too_complex(std::string_view regex) {
  uint64_t product = 1;
  for (size_t i = 0; i < regex.size(); ++i) {
    if (regex[i] == '\\') {
      size_t digits = 0;
      while (i + 1 + digits < regex.size() && std::isdigit(static_cast<unsigned char>(regex[i + 1 + digits])))
        ++digits;
      if (digits > 2) return "a backreference has at most two digits";
      ++i;  // the escaped character
      continue;
    }
    if (regex[i] != '{') continue;
    uint64_t bound = 0;
    size_t j = i + 1;
    for (; j < regex.size() && (std::isdigit(static_cast<unsigned char>(regex[j])) || regex[j] == ','); ++j) {
      if (regex[j] == ',') continue;
      bound = bound * 10 + static_cast<uint64_t>(regex[j] - '0');
      if (bound > kMaxRepeat) return "a repetition count is at most " + std::to_string(kMaxRepeat);
    }
    product *= bound + 1;
    if (product > kMaxRepeatProduct)
      return "repetition counts multiply to at most " + std::to_string(kMaxRepeatProduct);
  }
  return "";
}

core::Error bad(std::string message) {
  return core::Error{std::move(message), core::ErrorKind::invalid_input};
}

}  // namespace

std::optional<Endpoint> endpoint_of(std::string_view path) {
  for (const auto& [name, endpoint] : kEndpoints)
    if (name == path) return endpoint;
  return std::nullopt;
}

size_t query_piece_count(std::string_view raw_query) {
  size_t count = 0;
  while (!raw_query.empty()) {
    const size_t end = std::min(raw_query.find('&'), raw_query.size());
    if (end > 0) ++count;
    raw_query.remove_prefix(std::min(end + 1, raw_query.size()));
  }
  return count;
}

core::Expected<ViewQuery> parse_view_query(Endpoint endpoint, ServeMode mode,
                                           const QueryParams& params) {
  ViewQuery query;
  std::string granularity = "functions";
  for (auto it = params.begin(); it != params.end(); it = params.upper_bound(it->first)) {
    const std::string& name = it->first;
    const std::string& value = it->second;
    if (!known_param(endpoint, mode, name))
      return bad("unknown parameter " + quoted(name) + " for this request");
    const size_t repeats = params.count(name);
    if (repeats > 1 && !is_label_param(name))
      return bad("parameter " + quoted(name) + " given more than once");
    if (repeats > kMaxLabelFilters)
      return bad("parameter " + quoted(name) + " given more than " +
                 std::to_string(kMaxLabelFilters) + " times");
    const size_t cap = is_regex_param(name) ? kMaxRegexLength : kMaxValueLength;
    if (value.size() > cap)
      return bad("parameter '" + name + "' is " + std::to_string(value.size()) +
                 " bytes long; at most " + std::to_string(cap) + " are allowed");
    if (std::any_of(value.begin(), value.end(), [](char c) {
          return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
        }))
      return bad("parameter '" + name + "' holds a control character");
    if (is_label_param(name)) {
      const auto [first, last] = params.equal_range(name);
      for (auto label = first; label != last; ++label) {
        const std::string& filter = label->second;
        if (filter.size() > kMaxRegexLength)
          return bad("parameter '" + name + "' is " + std::to_string(filter.size()) +
                     " bytes long; at most " + std::to_string(kMaxRegexLength) + " are allowed");
        if (std::any_of(filter.begin(), filter.end(), [](char c) {
              return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
            }))
          return bad("parameter '" + name + "' holds a control character");
        if (const std::string why = regex_too_complex(filter); !why.empty())
          return bad("parameter '" + name + "': " + why);
        if (auto parsed = analyze::parse_label_filter(filter); !parsed)
          return bad("parameter '" + name + "': " + parsed.error().message);
        (name == "label_focus" ? query.filters.labels.focus : query.filters.labels.ignore)
            .push_back(filter);
      }
      continue;
    }
    if (is_regex_param(name) || name == "image") {
      if (const std::string why = regex_too_complex(value); !why.empty())
        return bad("parameter '" + name + "': " + why);
      if (auto compiled = analyze::compile_report_regex(value); !compiled)
        return bad("parameter '" + name + "': " + compiled.error().message);
    }
    if (name == "si") query.sample_index = value;
    else if (name == "granularity") granularity = value;
    else if (name == "focus") query.filters.focus = value;
    else if (name == "ignore") query.filters.ignore = value;
    else if (name == "hide") query.filters.hide = value;
    else if (name == "show") query.filters.show = value;
    else if (name == "f") query.function = value;
    else if (name == "epoch") query.epoch = value;
    else if (name == "epoch_to") query.epoch_to = value;
    else if (name == "base_epoch") query.base_epoch = value;
    else if (name == "base_epoch_to") query.base_epoch_to = value;
    else if (name == "image") query.image = value;
    else if (name == "event") query.event = value;
    else if (name == "time_range") {
      auto range = analyze::parse_time_range(value);
      if (!range) return bad("parameter 'time_range': " + range.error().message);
      query.filters.time = std::move(*range);
    }
    else if (name == "window") {
      auto range = analyze::parse_time_range(value);
      if (!range) return bad("parameter 'window': " + range.error().message);
      query.window = std::move(*range);
    }
    else if (name == "side") {
      if (value != "base" && value != "new")
        return bad("parameter 'side' must be base or new, not " + quoted(value));
      query.base_side = value == "base";
    }
  }
  if (!analyze::parse_granularity(granularity, query.granularity))
    return bad("parameter 'granularity' must be functions, files, lines or addresses, not " +
               quoted(granularity));
  if (!query.epoch_to.empty() && query.epoch.empty())
    return bad("parameter 'epoch_to' needs 'epoch', the range's first epoch");
  if (!query.base_epoch_to.empty() && query.base_epoch.empty())
    return bad("parameter 'base_epoch_to' needs 'base_epoch', the base range's first epoch");
  if (endpoint == Endpoint::diff && mode == ServeMode::db && query.base_epoch.empty())
    return bad("parameter 'base_epoch' (the epoch to compare against) is required");
  if (takes_function(endpoint) && query.function.empty())
    return bad("parameter 'f' (a regex of function names) is required");
  return query;
}

}  // namespace tally::web
