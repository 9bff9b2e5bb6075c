// C++ names: demangling (abi::__cxa_demangle) and pprof's simplified form. In core, as the
// symbolizer, the perf script reader and the reports all name functions with them.
#pragma once

#include <string>
#include <string_view>

namespace tally::core {

// Itanium C++ ABI names, as g++ and clang mangle them on Linux: "ns::f(int) const" for
// "_ZNK2ns1fEi". A name that is not one (C, Rust's "_R" scheme, a malformed or overlong
// "_Z...") comes back as is.
std::string demangle(std::string_view symbol);

// The name without parameters, template arguments, return type, cv-qualifiers and
// " [clone .cold]" suffixes, as pprof shows functions: "ns::f" for "ns::f(int) const".
// "(anonymous namespace)" and operator names ("operator()", "operator<<") are kept.
std::string simplify_name(std::string_view demangled);

}  // namespace tally::core
