// Companion modules of libtally: code too heavy for the library every profiled program
// loads (tally's format writers, with the C++ runtime, fmt and zlib) lives in shared
// objects beside libtally.so, loaded only when a program asks for their output.
#pragma once

#include <cstddef>

namespace tally::runtime {

// The address of `symbol` in the module `file_name` beside libtally.so (or in the file
// $`env_override` names), loaded on first use and kept loaded; nullptr with a message in
// `error`. Not async-signal-safe.
void* companion_symbol(const char* file_name, const char* env_override, const char* symbol,
                       char* error, size_t error_size);

}  // namespace tally::runtime
