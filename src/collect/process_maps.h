// What a process has mapped, as PERF_RECORD_MMAP2 records (or /proc/PID/maps) report it:
// the address ranges of its executables and shared objects. Used to attribute samples to
// images (the profile's mappings, the daemon's per-image histograms) and by the DWARF
// unwinder to find each frame's ELF and its CFI.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collect/perf_records.h"

namespace tally::collect {

struct ImageMapping {
  uint64_t start = 0;
  uint64_t limit = 0;   // one past the end
  uint64_t pgoff = 0;   // file offset mapped at `start`
  std::string path;     // "" for anonymous memory; "[vdso]", "[stack]"... as the kernel names them
  std::string build_id; // lower-case hex, "" when the kernel did not give one
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  bool executable = false;
};

// The mapping an MMAP2 record reports, when it can hold sampled code: executable, not
// empty, not wrapping around the address space; else nullopt.
std::optional<ImageMapping> executable_mapping(const MmapRecord& record);

// One process's address space. A new mapping replaces whatever it overlaps (mmap over an
// existing range, as the kernel does). `generation` changes on every update, so that
// caches built from the maps (the unwinder's Dwfl) know when to rebuild.
class AddressSpace {
 public:
  void add(const ImageMapping& mapping);
  // The mapping containing `address`, or nullptr.
  const ImageMapping* find(uint64_t address) const;
  // Every mapping, by start address.
  std::vector<const ImageMapping*> all() const;
  uint64_t generation() const { return generation_; }

 private:
  std::map<uint64_t, ImageMapping> by_start_;
  uint64_t generation_ = 0;
};

// Every process seen in a recording. fork() copies the parent's maps; exec (a COMM record
// with the exec flag) clears them; exit keeps them, for samples still in the buffers.
class ProcessTable {
 public:
  AddressSpace& process(pid_t pid);  // created empty when unknown
  const AddressSpace* find(pid_t pid) const;
  void fork(pid_t parent, pid_t child);
  void exec(pid_t pid);
  // Drops a process's maps (tally daemon, once an exited process's samples are in).
  void erase(pid_t pid) { processes_.erase(pid); }
  size_t size() const { return processes_.size(); }
  // Seeds a process's maps from /proc/PID/maps (attaching with -p, or processes that were
  // running before system-wide sampling started); false when the file cannot be read.
  bool load_proc_maps(pid_t pid);

 private:
  std::unordered_map<pid_t, std::unique_ptr<AddressSpace>> processes_;
};

}  // namespace tally::collect
