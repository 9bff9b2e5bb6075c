// The ELF files the DWARF unwinder reads, opened once per unwinder and shared by every
// process that maps them: the same libc in a thousand processes is one open file, one
// set of headers, one table of which addresses have CFI. Each process's Dwfl borrows the
// file's libelf handle (libelf counts the references) instead of opening its own.
#pragma once

#include <elfutils/libdw.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collect/process_maps.h"
#include "symbolize/elf_image.h"

namespace tally::collect {

// How a function finds its Canonical Frame Address (the caller's stack pointer) at one
// address, by the file's CFI.
struct CfaRule {
  enum class Kind : uint8_t {
    unknown,        // no CFI for the address
    stack_pointer,  // CFA = rsp + offset: the function keeps no frame pointer there
    other,          // rbp + offset, an expression, or a signal frame
  };
  Kind kind = Kind::unknown;
  int64_t offset = 0;
};

class UnwindElf {
 public:
  explicit UnwindElf(std::unique_ptr<symbolize::ElfImage> image);
  ~UnwindElf();
  UnwindElf(const UnwindElf&) = delete;
  UnwindElf& operator=(const UnwindElf&) = delete;

  Elf* elf() const { return image_->elf(); }
  const std::string& path() const { return image_->path(); }
  // The load bias of `mapping` (runtime address minus link-time address), from where the
  // mapping's file offset sits in the PT_LOAD segments; nullopt when no segment holds it.
  std::optional<uint64_t> bias_of(const ImageMapping& mapping) const;
  // The module's extent at link time as libdwfl computes it: the first PT_LOAD's address
  // rounded down to its alignment, up to the end of the highest segment.
  uint64_t link_low() const { return link_low_; }
  uint64_t link_high() const { return link_high_; }
  // Eight bytes at a link-time address inside a read-only loaded segment, as the file
  // holds them (what the process sees there, since nobody writes to it).
  std::optional<uint64_t> read_only_word(uint64_t link_address) const;
  // Whether the unwinder has CFI for the code at `link_address` (.eh_frame, or a
  // .debug_frame in the file); memoized per address.
  bool has_cfi(uint64_t link_address);
  // The CFA rule of .eh_frame at `link_address` (not memoized: callers keep what they need).
  CfaRule cfa_rule(uint64_t link_address);

 private:
  std::unique_ptr<symbolize::ElfImage> image_;
  std::vector<symbolize::LoadSegment> segments_;
  bool is_exec_ = false;
  uint64_t link_low_ = 0;
  uint64_t link_high_ = 0;
  const uint8_t* bytes_ = nullptr;  // the whole file, as libelf mapped it
  size_t size_ = 0;
  bool has_debug_frame_ = false;
  Dwarf_CFI* eh_cfi();
  Dwarf_CFI* eh_cfi_ = nullptr;
  bool eh_cfi_tried_ = false;
  std::unordered_map<uint64_t, bool> cfi_at_;
};

struct ElfCacheStats {
  uint64_t opened = 0;   // files opened and parsed
  uint64_t missing = 0;  // mappings whose file could not be opened, was not ELF or had another build id
};

class UnwindElfCache {
 public:
  // The ELF of an executable mapping of process `pid`, or nullptr when it cannot be read
  // (the result, good or bad, is remembered per file). "[vdso]" is this process's own
  // vdso: every 64-bit process of the running kernel maps the same image.
  std::shared_ptr<UnwindElf> get(const ImageMapping& mapping, pid_t pid);
  // Drops the files that no process holds any more, once there are more than `keep`.
  void trim(size_t keep);
  size_t size() const { return files_.size(); }
  const ElfCacheStats& stats() const { return stats_; }

 private:
  std::shared_ptr<UnwindElf> open(const ImageMapping& mapping, pid_t pid);
  std::shared_ptr<UnwindElf> vdso(const ImageMapping& mapping);

  std::unordered_map<std::string, std::shared_ptr<UnwindElf>> files_;
  std::shared_ptr<UnwindElf> vdso_;
  bool vdso_tried_ = false;
  ElfCacheStats stats_;
};

}  // namespace tally::collect
