#include "cli/output.h"

#include <cstdio>

#include "cli/command.h"
#include "io/output.h"

namespace tally::cli {

int write_outputs(const std::vector<formats::OutputFile>& files, const std::string& output,
                  std::string_view format_name) {
  if (files.empty()) {
    std::fprintf(stderr, "tally: error: no samples to write\n");
    return kUnsupported;
  }
  // A format that writes one file per image writes into a directory when there are several
  // images, or when the output names a directory.
  bool per_image = !files.front().name.empty();
  bool directory =
      per_image && (files.size() > 1 || output.ends_with('/') || io::is_directory(output));
  if (!directory) {
    if (auto st = io::write_file_atomically(output, files.front().bytes); !st)
      return report(st.error());
    return kOk;
  }
  if (output == "-") {
    std::fprintf(stderr, "tally: error: the profile has %zu images, which %.*s writes as one "
                         "file each: give -o DIRECTORY\n",
                 files.size(), static_cast<int>(format_name.size()), format_name.data());
    return kUsage;
  }
  if (auto st = io::make_directories(output); !st) return report(st.error());
  for (const auto& f : files) {
    std::string path = output + (output.ends_with('/') ? "" : "/") + f.name;
    if (auto st = io::write_file_atomically(path, f.bytes); !st) return report(st.error());
    std::fprintf(stderr, "tally: wrote %s\n", path.c_str());
  }
  return kOk;
}

}  // namespace tally::cli
