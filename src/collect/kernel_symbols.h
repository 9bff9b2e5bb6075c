// Kernel function names from /proc/kallsyms, for the kernel frames of `tally record`
// (the ELF symbolizer has no file to read for them). Empty when kptr_restrict hides the
// addresses (they read as zero).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tally::collect {

// Where the kernel's half of the x86-64 address space starts: a sampled address at or above
// it is the kernel's (tally record's profile builder and the daemon's collector).
constexpr uint64_t kKernelSpaceStart = 0xffff800000000000ULL;

class KernelSymbols {
 public:
  // Reads /proc/kallsyms (or `path`): text symbols only.
  void load(const std::string& path = "/proc/kallsyms");
  bool empty() const { return symbols_.empty(); }
  // The function containing `address` (the last symbol at or below it); "" when none.
  std::string_view find(uint64_t address) const;
  // _text's address (else _stext's) as the same read found it; 0 when absent or hidden.
  uint64_t text_start() const { return text_start_; }

 private:
  // 16 bytes a symbol, the names in one buffer: a kernel has 120k+ text symbols, and the
  // daemon keeps them (4 MB instead of 9 MB as strings).
  struct Symbol {
    uint64_t address;
    uint32_t name_offset, name_size;
  };
  std::vector<Symbol> symbols_;
  std::string names_;
  uint64_t text_start_ = 0;
};

// The running kernel's text start (_text in /proc/kallsyms; 0 when hidden) and build id
// (/sys/kernel/notes; "" when unreadable).
uint64_t kernel_text_start(const std::string& kallsyms = "/proc/kallsyms");
std::string kernel_build_id(const std::string& notes = "/sys/kernel/notes");

}  // namespace tally::collect
