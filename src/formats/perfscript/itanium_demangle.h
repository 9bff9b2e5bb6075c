// Demangling of Itanium C++ ABI symbol names ("_Z..."), the scheme g++ and clang use on
// Linux, with the C++ runtime's own demangler. Other names (C, Rust's "_R" v0 scheme)
// are returned unchanged.
#pragma once

#include <string>
#include <string_view>

namespace tally::perfscript {

// "_Z4betav" -> "beta()"; the name itself when it is not a mangled name the runtime can
// demangle.
std::string demangle_itanium(std::string_view name);

}  // namespace tally::perfscript
