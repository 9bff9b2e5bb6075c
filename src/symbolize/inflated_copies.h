// Inflated copies of compressed debug files, written once to unlinked files on disk and
// then opened like uncompressed debug files, for a caller that symbolizes a few new
// addresses of the same images again and again (the daemon's pushes, every 15 s). Building
// libc's index from libc6-dbg's compressed file inflated 8.6 MB into fresh memory each
// time (the zeroed buffer's page faults, then libdeflate): most of an interval's
// symbolizing. The copy is read from the page cache instead (31-42 ms became 18 ms), and
// its pages leave the resident set as the resolvers go (ElfIndex::release_dwarf_pages);
// kept in memory instead, the index added 13 MB to the daemon for good.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tally::symbolize {

// Where each compile unit of a debug file lies, which ElfIndex reads from every unit's DIE
// (libc's 1500 units: 24 ms of each interval): kept with the copy, a few dozen KB.
struct UnitTable {
  struct Range {
    uint64_t low = 0;
    uint64_t high = 0;  // one past the end
    size_t unit = 0;
  };
  std::vector<uint64_t> offsets;  // each unit's DIE offset in .debug_info
  std::vector<Range> ranges;      // by low address
};

class InflatedCopies {
 public:
  // Copies go to `dir` (O_TMPFILE: gone with the process), at most `max_bytes` in all.
  explicit InflatedCopies(std::string dir, size_t max_bytes = 256u << 20)
      : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  ~InflatedCopies();
  InflatedCopies(const InflatedCopies&) = delete;
  InflatedCopies& operator=(const InflatedCopies&) = delete;

  // A path ("/proc/self/fd/N") of `debug_file` with its compressed sections inflated (as
  // open_inflated lays it out), made on the first call for this version of the file,
  // streamed into the copy (write_inflated_elf: never whole in memory); "" when none can
  // be made (not a file open_inflated takes, the directory not writable, over the
  // budget): the caller then inflates it in memory.
  std::string path_of(const std::string& debug_file);

  // The unit table kept for the copy of `debug_file` (path_of's last answer), or null.
  const UnitTable* units_of(const std::string& debug_file) const;
  void keep_units(const std::string& debug_file, UnitTable units);

  size_t copies() const { return copies_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  struct Copy {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    long modified_ns = 0;
    long modified_s = 0;
    int fd = -1;  // -1: tried and failed; not tried again for this version
    size_t bytes = 0;  // the copy's
    std::string path;
    std::optional<UnitTable> units;
  };
  std::string dir_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::map<std::string, Copy> copies_;  // by the debug file's path
};

}  // namespace tally::symbolize
