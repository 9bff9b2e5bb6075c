#include "formats/callgrind/events.h"

#include "core/checked_math.h"

namespace tally::callgrind {

EventType event_type(std::string_view event) {
  const size_t open = event.find('(');
  if (open != std::string_view::npos && open > 0 && event.size() > open + 2 &&
      event.back() == ')' && event.find_first_of("()", open + 1) == event.size() - 1)
    return {std::string(event.substr(0, open)),
            std::string(event.substr(open + 1, event.size() - open - 2))};
  return {std::string(event), "count"};
}

std::string event_name(std::string_view type, std::string_view unit) {
  std::string name(type.empty() ? std::string_view("events") : type);
  if (!unit.empty() && unit != "count") name += "(" + std::string(unit) + ")";
  for (char& c : name)
    if (c == ' ' || c == '\t') c = '_';
  return name;
}

int64_t Formula::evaluate(std::span<const int64_t> values) const {
  int64_t sum = 0;
  for (const Term& t : terms)
    sum = core::add_saturating(sum, core::mul_saturating(t.coefficient, values[t.event]));
  return sum;
}

namespace detail {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9') || c == '(' || c == ')' || c == '.';
}

}  // namespace

// term := [Number [*]] Name ; formula := term (('+' | '-') term)*
bool parse_terms(std::string_view text, std::vector<RawTerm>& terms, std::string& error) {
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && is_space(text[i])) ++i;
  };
  int64_t sign = 1;
  while (true) {
    skip();
    RawTerm term;
    if (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      int64_t n = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (n > (INT64_MAX - 9) / 10) {
          error = "coefficient too large";
          return false;
        }
        n = n * 10 + (text[i++] - '0');
      }
      term.coefficient = n;
      skip();
      if (i < text.size() && text[i] == '*') {
        ++i;
        skip();
      }
    }
    if (i >= text.size() || !is_name_start(text[i])) {
      error = i >= text.size() ? "expected an event name at the end"
                               : "expected an event name at '" + std::string(text.substr(i)) + "'";
      return false;
    }
    const size_t start = i;
    while (i < text.size() && is_name_char(text[i])) ++i;
    term.name = text.substr(start, i - start);
    term.coefficient *= sign;
    terms.push_back(term);
    skip();
    if (i == text.size()) return true;
    if (text[i] != '+' && text[i] != '-') {
      error = "expected '+' or '-' at '" + std::string(text.substr(i)) + "'";
      return false;
    }
    sign = text[i] == '+' ? 1 : -1;
    ++i;
  }
}

}  // namespace detail

}  // namespace tally::callgrind
