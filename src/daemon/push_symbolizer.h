// The daemon's symbolizer for pushes, kept across intervals: what an (image, offset) resolved
// to is cached, so that an interval symbolizes from the binaries only the addresses no earlier
// interval saw (a steady workload's are mostly the same from one interval to the next), and
// /proc/kallsyms is read once and kept (re-read every 10 minutes, for modules loaded since),
// not twice per interval. The cache is bounded in bytes: past `max_bytes` it starts again
// empty (a count of addresses was no bound: at ~400 bytes an address, 100,000 of them are
// 40 MB, and a busy machine's new processes brought 12,000 new addresses a minute). Its
// names are interned once each (files repeat across functions, names across addresses).
// Compressed debug files (libc6-dbg's libc) are inflated once, into copies on disk in
// `copies_dir` (symbolize::InflatedCopies), not again for each interval that has new
// addresses in them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyze/report_input.h"
#include "collect/kernel_symbols.h"
#include "core/string_table.h"
#include "daemon/push_interval.h"
#include "symbolize/inflated_copies.h"

namespace tally::daemon {

class PushSymbolizer {
 public:
  static constexpr size_t kDefaultMaxBytes = 4u << 20;

  explicit PushSymbolizer(analyze::ReportSymbolize options, size_t max_bytes = kDefaultMaxBytes,
                          std::string copies_dir = "/var/tmp")
      : options_(std::move(options)), max_bytes_(max_bytes), copies_(std::move(copies_dir)) {}

  // Names the profiles' locations: from the cache, else (in one pass over all the profiles'
  // new addresses: an image shared by many services is read once) from kallsyms and the
  // binaries. Failures are warnings (the frames stay addresses) and are cached too.
  void symbolize(std::vector<PushInterval::ServiceProfile>& profiles, core::Diagnostics& diagnostics);

  // Reads /proc/kallsyms now (the daemon's start, before the collector needs _text) and
  // gives _text's address: one read for both. 0 when hidden or the kernel has no build id.
  uint64_t kernel_text_start();

  // Lookups answered by the cache and not, times it started again, addresses it holds and
  // the heap bytes it holds them in (an estimate from its containers' sizes); read from any
  // thread (the daemon's status).
  struct Counters {
    uint64_t hits = 0, misses = 0, resets = 0, cached = 0, bytes = 0;
  };
  Counters counters() const { return {hits_, misses_, resets_, cached_, bytes_}; }

 private:
  struct Function {
    core::StringId name = 0, system_name = 0, filename = 0;  // in strings_
    int64_t start_line = 0;
    bool operator==(const Function&) const = default;
  };
  struct FunctionHash {
    size_t operator()(const Function& f) const;
  };
  struct Line {
    uint32_t function = 0;  // into functions_
    int64_t line = 0, column = 0;
  };
  struct Entry {
    uint32_t first_line = 0, lines = 0;  // in lines_
  };
  struct ImageFlags {
    bool has_functions = false, has_filenames = false, has_line_numbers = false,
         has_inline_frames = false;
  };

  uint32_t image_index(const std::string& image_id);
  core::StringId intern(std::string_view text);
  size_t heap_bytes() const;
  void reset();
  void load_kernel_symbols();

  analyze::ReportSymbolize options_;
  size_t max_bytes_;
  std::unordered_map<std::string, uint32_t> image_ids_;
  std::vector<ImageFlags> image_flags_;  // per image index
  std::unordered_map<uint64_t, Entry> entries_;  // image index << 32 | offset
  std::vector<Line> lines_;
  std::vector<Function> functions_;
  std::unordered_map<Function, uint32_t, FunctionHash> function_ids_;
  core::StringTable strings_;
  size_t string_bytes_ = 0;  // the text interned in strings_
  collect::KernelSymbols kernel_;
  std::string kernel_build_id_;
  std::chrono::steady_clock::time_point kernel_loaded_{};
  bool kernel_tried_ = false;
  symbolize::InflatedCopies copies_;
  std::atomic<uint64_t> hits_ = 0, misses_ = 0, resets_ = 0, cached_ = 0, bytes_ = 0;
};

}  // namespace tally::daemon
