// C++ names: demangling (abi::__cxa_demangle) and pprof's simplified form.
#pragma once

#include <string>
#include <string_view>

namespace tally::symbolize {

// "ns::f(int) const" for "_ZNK2ns1fEi"; a name that is not mangled comes back as is.
std::string demangle(const std::string& symbol);

// The name without parameters, template arguments, return type, cv-qualifiers and
// " [clone .cold]" suffixes, as pprof shows functions: "ns::f" for "ns::f(int) const".
// "(anonymous namespace)" and operator names ("operator()", "operator<<") are kept.
std::string simplify_name(std::string_view demangled);

}  // namespace tally::symbolize
