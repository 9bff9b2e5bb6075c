#include "web/query.h"

#include <algorithm>
#include <array>

namespace tally::web {

namespace {

constexpr std::array<std::pair<std::string_view, Endpoint>, 8> kEndpoints{{
    {"/api/meta", Endpoint::meta},
    {"/api/top", Endpoint::top},
    {"/api/flame", Endpoint::flame},
    {"/api/peek", Endpoint::peek},
    {"/api/source", Endpoint::source},
    {"/api/disasm", Endpoint::disasm},
    {"/api/diff", Endpoint::diff},
    {"/api/db", Endpoint::db},
}};

bool takes_function(Endpoint e) {
  return e == Endpoint::peek || e == Endpoint::source || e == Endpoint::disasm;
}

bool is_regex_param(std::string_view name) {
  return name == "focus" || name == "ignore" || name == "hide" || name == "show" || name == "f";
}

bool known_param(Endpoint endpoint, ServeMode mode, std::string_view name) {
  if (name == "si" || name == "granularity" || name == "side" || name == "focus" ||
      name == "ignore" || name == "hide" || name == "show")
    return true;
  if (name == "f") return takes_function(endpoint);
  if (name == "epoch" || name == "image" || name == "event") return mode == ServeMode::db;
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
    if (params.count(name) > 1) return bad("parameter " + quoted(name) + " given more than once");
    const size_t cap = is_regex_param(name) ? kMaxRegexLength : kMaxValueLength;
    if (value.size() > cap)
      return bad("parameter '" + name + "' is " + std::to_string(value.size()) +
                 " bytes long; at most " + std::to_string(cap) + " are allowed");
    if (std::any_of(value.begin(), value.end(), [](char c) {
          return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
        }))
      return bad("parameter '" + name + "' holds a control character");
    if (is_regex_param(name)) {
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
    else if (name == "image") query.image = value;
    else if (name == "event") query.event = value;
    else if (name == "side") {
      if (value != "base" && value != "new")
        return bad("parameter 'side' must be base or new, not " + quoted(value));
      query.base_side = value == "base";
    }
  }
  if (!analyze::parse_granularity(granularity, query.granularity))
    return bad("parameter 'granularity' must be functions, files, lines or addresses, not " +
               quoted(granularity));
  if (takes_function(endpoint) && query.function.empty())
    return bad("parameter 'f' (a regex of function names) is required");
  if (!query.image.empty()) {
    if (query.image.size() > kMaxRegexLength) return bad("parameter 'image' is too long");
    if (auto compiled = analyze::compile_report_regex(query.image); !compiled)
      return bad("parameter 'image': " + compiled.error().message);
  }
  return query;
}

}  // namespace tally::web
