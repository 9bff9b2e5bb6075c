// The text list of mapped objects at the end of a gperftools CPU profile: /proc/self/maps
// lines ("start-limit perms offset dev inode path", the first address at the very start of
// the line) and "build=PATH" lines, whose PATH replaces "$build" in later mapping paths
// where "$build" is followed by a non-word character (or ends the path). Anything else is
// ignored, as the spec requires.
// Where google/pprof departs from the spec, tally follows the spec: pprof lets the first
// build= line win, substitutes "$build" even before a word character, cuts a path at its
// first space ("/bin/my prog" -> "/bin/my") and accepts indented mapping lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tally::gperf {

struct MapsLine {
  uint64_t start = 0;
  uint64_t limit = 0;
  uint64_t offset = 0;
  std::string perms;  // "r-xp"
  std::string path;   // "$build" already substituted; may be empty (anonymous memory)
  bool executable() const { return perms.find('x') != std::string::npos; }
};

std::vector<MapsLine> parse_mapped_objects(std::string_view text);

// One line in the style of gperftools' ProcMapsIterator::FormatLine.
std::string format_maps_line(uint64_t start, uint64_t limit, std::string_view perms,
                             uint64_t offset, std::string_view path);

}  // namespace tally::gperf
