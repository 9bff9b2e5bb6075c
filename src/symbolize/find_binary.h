// Where a mapping's ELF file and its DWARF are on this machine: the --binary-path
// directories, the mapping's own path, /usr/lib/debug/.build-id and .gnu_debuglink.
#pragma once

#include <string>
#include <vector>

namespace tally::symbolize {

struct FoundBinary {
  std::string binary;  // the ELF that was mapped ("" when only a debug file was found)
  std::string debug;   // the file the DWARF is read from ("" when there is none)
  std::string key;     // build id, else the binary's path: one cache entry per key
  std::string build_id;  // the binary's, else the mapping's (lower-case hex; "" when neither)
  std::string file;      // the mapping's file, as the profile names it
  std::vector<std::string> searched;  // every path tried, for the "not found" report
  std::vector<std::string> rejected;  // "PATH has build id X": files of another build
  std::string problem;  // why nothing usable was found ("" when found)
  bool found() const { return !binary.empty() || !debug.empty(); }
};

// The directories find_binary() searches: `dirs` (--binary-path), then $PPROF_BINARY_PATH.
std::vector<std::string> binary_search_dirs(std::vector<std::string> dirs);

// `build_id` is the mapping's (hex, may be empty): a candidate whose own build id
// differs is not used. Each of `dirs` is tried as DIR/basename and DIR/full/path, before
// the mapping's path itself.
FoundBinary find_binary(const std::string& mapping_file, const std::string& build_id,
                        const std::vector<std::string>& dirs);

// The separate debug files tried for a binary, in order.
std::vector<std::string> debug_file_candidates(const std::string& binary_path,
                                               const std::string& build_id,
                                               const std::string& debuglink);

}  // namespace tally::symbolize
