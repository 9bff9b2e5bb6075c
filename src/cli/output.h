// Writing a converted profile: one file, standard output, or (for formats that write one
// file per image) a directory.
#pragma once

#include <string>
#include <vector>

#include "formats/format.h"

namespace tally::cli {

// Returns an exit code, having reported any error.
int write_outputs(const std::vector<formats::OutputFile>& files, const std::string& output,
                  std::string_view format_name);

}  // namespace tally::cli
