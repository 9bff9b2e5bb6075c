#include "formats/perfscript/itanium_demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace tally::perfscript {

namespace {

// Real mangled names stay far below this; a crafted one may make the demangler's output
// grow much faster than its input.
constexpr size_t kMaxMangledLength = 4096;

}  // namespace

std::string demangle_itanium(std::string_view name) {
  if (!name.starts_with("_Z") || name.size() > kMaxMangledLength) return std::string(name);
  const std::string mangled(name);  // the demangler wants a NUL-terminated string
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !demangled) return mangled;
  return demangled.get();
}

}  // namespace tally::perfscript
