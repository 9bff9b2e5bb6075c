// The kernel's callchain (PERF_SAMPLE_CALLCHAIN) split at its PERF_CONTEXT_* markers into
// the kernel part and the user part, both leaf first.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tally::collect {

struct SplitCallchain {
  std::vector<uint64_t> kernel;  // PERF_CONTEXT_KERNEL section: kernel ip first
  std::vector<uint64_t> user;    // PERF_CONTEXT_USER section: user ip first
  uint64_t other = 0;            // frames of other contexts (guest, hypervisor): dropped
};

// Frames before the first marker count as kernel frames when `sample_in_kernel`, else user
// (the kernel always writes a marker first; this is for robustness).
void split_callchain(std::span<const uint64_t> chain, bool sample_in_kernel, SplitCallchain& out);

}  // namespace tally::collect
