#include "core/demangle.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

namespace tally::core {

namespace {

// Real mangled names stay far below this; a crafted one may make the demangler's output
// grow much faster than its input.
constexpr size_t kMaxMangledLength = 4096;

constexpr std::string_view kAnonymous = "(anonymous namespace)";

bool starts_with_at(std::string_view text, size_t at, std::string_view prefix) {
  return text.substr(at, prefix.size()) == prefix;
}

// Index one past the group that opens at `at` with `open` and closes with `close`.
size_t skip_group(std::string_view text, size_t at, char open, char close) {
  int depth = 0;
  for (size_t i = at; i < text.size(); ++i) {
    if (text[i] == open) ++depth;
    if (text[i] == close && --depth == 0) return i + 1;
  }
  return text.size();
}

}  // namespace

std::string demangle(std::string_view symbol) {
  if (!symbol.starts_with("_Z") || symbol.size() > kMaxMangledLength) return std::string(symbol);
  const std::string mangled(symbol);  // the demangler wants a NUL-terminated string
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !text) return mangled;
  return text.get();
}

std::string simplify_name(std::string_view name) {
  // A pseudo-frame such as "[tally: sampling]" or "[unknown]" is not a C++ name.
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']') return std::string(name);
  if (auto clone = name.find(" [clone "); clone != std::string_view::npos)
    name = name.substr(0, clone);
  std::string out;
  size_t name_start = 0;  // where the last top-level word began (drops a return type)
  for (size_t i = 0; i < name.size();) {
    char c = name[i];
    if (starts_with_at(name, i, kAnonymous)) {
      out += kAnonymous;
      i += kAnonymous.size();
    } else if (starts_with_at(name, i, "operator") &&
               (i + 8 == name.size() || !std::isalnum(static_cast<unsigned char>(name[i + 8])))) {
      // Copy the operator's symbol: "operator()", "operator<<", "operator new".
      out += "operator";
      i += 8;
      if (starts_with_at(name, i, "()")) {
        out += "()";
        i += 2;
      } else {
        while (i < name.size() && std::string_view("<>=!+-*/%^&|~[],").find(name[i]) !=
                                      std::string_view::npos) {
          out += name[i++];
        }
      }
    } else if (c == '(') {
      i = skip_group(name, i, '(', ')');
    } else if (c == '<') {
      i = skip_group(name, i, '<', '>');
    } else if (c == ' ') {
      name_start = out.size() + 1;
      out += c;
      ++i;
    } else {
      out += c;
      ++i;
    }
  }
  // What follows the last top-level space is the name; before it, a return type, and
  // after the parameters, qualifiers (" const") that leave a trailing word.
  while (!out.empty() && out.back() == ' ') out.pop_back();
  for (std::string_view qualifier : {" const", " volatile", " &&", " &"}) {
    if (out.size() > qualifier.size() &&
        std::string_view(out).substr(out.size() - qualifier.size()) == qualifier)
      out.resize(out.size() - qualifier.size());
  }
  if (name_start > 0 && name_start < out.size()) {
    std::string tail = out.substr(name_start);
    // Keep "operator new" whole; drop only a return type.
    if (tail.rfind("new", 0) != 0 && tail.rfind("delete", 0) != 0) out = tail;
  }
  return out;
}

}  // namespace tally::core
