#include "collect/callchain.h"

#include <linux/perf_event.h>

namespace tally::collect {

void split_callchain(std::span<const uint64_t> chain, bool sample_in_kernel, SplitCallchain& out) {
  out.kernel.clear();
  out.user.clear();
  out.other = 0;
  enum { kernel, user, other } section = sample_in_kernel ? kernel : user;
  for (uint64_t pc : chain) {
    if (pc >= PERF_CONTEXT_MAX) {  // a marker: the frames after it belong to that context
      if (pc == PERF_CONTEXT_KERNEL) section = kernel;
      else if (pc == PERF_CONTEXT_USER) section = user;
      else section = other;
      continue;
    }
    if (section == kernel) out.kernel.push_back(pc);
    else if (section == user) out.user.push_back(pc);
    else ++out.other;
  }
}

}  // namespace tally::collect
