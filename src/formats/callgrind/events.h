// Callgrind events in the model: the name of an event <-> a sample type, and inherited
// events ("event: Sum = Ir + 2 * Dr"), whose formula the reader evaluates.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tally::callgrind {

// "cpu(ms)" is type cpu, unit ms (pprof's and xdebug's "Time_(10ns)" style); any other name
// is a count: "Ir" is Ir/count.
struct EventType {
  std::string type;
  std::string unit;
};
EventType event_type(std::string_view event);
// The reverse: "Ir" for Ir/count (or no unit), "cpu(ms)" for cpu/ms. Spaces, which would
// split the events: line, become '_'.
std::string event_name(std::string_view type, std::string_view unit);

// A linear formula over other events: sum of coefficient x event.
struct Formula {
  struct Term {
    int64_t coefficient = 1;
    size_t event = 0;  // index into the values it is evaluated on
  };
  std::vector<Term> terms;
  int64_t evaluate(std::span<const int64_t> values) const;
};

// Parses the spec's InheritedExpr ("Ir + 2 * Dr", also "2 Dr" and '-' as KCachegrind
// does); `index_of` maps an event name to its index, or returns -1 for an unknown one.
// On failure returns false with `error` saying why.
template <class IndexOf>
bool parse_formula(std::string_view text, IndexOf index_of, Formula& out, std::string& error);

namespace detail {
struct RawTerm {
  int64_t coefficient = 1;
  std::string_view name;
};
bool parse_terms(std::string_view text, std::vector<RawTerm>& terms, std::string& error);
}  // namespace detail

template <class IndexOf>
bool parse_formula(std::string_view text, IndexOf index_of, Formula& out, std::string& error) {
  std::vector<detail::RawTerm> raw;
  if (!detail::parse_terms(text, raw, error)) return false;
  out.terms.clear();
  for (const auto& t : raw) {
    const long index = index_of(t.name);
    if (index < 0) {
      error = "unknown event '" + std::string(t.name) + "'";
      return false;
    }
    out.terms.push_back({t.coefficient, static_cast<size_t>(index)});
  }
  return true;
}

}  // namespace tally::callgrind
