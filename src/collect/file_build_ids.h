// Build ids of the files that processes map, read from the files (NT_GNU_BUILD_ID). tally
// does not ask the kernel for them (attr.build_id): while one event has it, the kernel
// flags the MMAP2 records of every other tool's events as holding a build id too, and perf
// 6.1 crashes on them (perf_open.cc). MMAP2 then carries device, inode and generation,
// which say whether a file reached by path is the one that was mapped.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "collect/perf_records.h"

namespace tally::collect {

struct FileBuildIdStats {
  uint64_t files_read = 0;    // ELF files opened (one per distinct file)
  uint64_t unreachable = 0;   // lookups no path answered (the process and the file gone)
};

class FileBuildIds {
 public:
  // The build id (lower-case hex) of the file `mapping` maps in process mapping.pid, "" for
  // anonymous memory, [vdso] and the like, files without one and files no longer reachable.
  // The file is read through /proc/PID/map_files (the very file mapped, even deleted),
  // else /proc/PID/root/PATH (the process's mount namespace), else PATH, each only when
  // its inode is the one mapped. Cached per (device, inode, generation): one read per file.
  // The reference holds until the next call.
  const std::string& of(const MmapRecord& mapping);

  const FileBuildIdStats& stats() const { return stats_; }

 private:
  struct Key {
    uint32_t dev_major, dev_minor;
    uint64_t inode, generation;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  // Bounds the memory of a daemon that runs for months while binaries are rebuilt.
  static constexpr size_t kMaxFiles = 1 << 16;

  std::unordered_map<Key, std::string, KeyHash> by_file_;
  FileBuildIdStats stats_;
};

}  // namespace tally::collect
