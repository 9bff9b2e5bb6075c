// OutputFile: never lose data. Output goes to a temporary file beside the target, is
// fsync'd, and renamed over the target only when complete; "-" writes standard output.
#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace tally::io {

// Writes `data` to `path` atomically (or to stdout for "-"; devices and FIFOs, which
// cannot be replaced, are written in place).
core::Status write_file_atomically(const std::string& path, std::string_view data);

// Creates `path` as a directory if it does not exist yet (parents included).
core::Status make_directories(const std::string& path);

bool is_directory(const std::string& path);

}  // namespace tally::io
