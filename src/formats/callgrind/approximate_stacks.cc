// Call graph -> stacks (`tally convert --approximate` to a format of stacks): the self costs
// already are samples of one-frame stacks; what goes is every call edge (inclusive costs,
// call counts) and jump, and the loss is said.
#include <fmt/format.h>

#include "formats/callgrind/callgrind.h"

namespace tally::callgrind {

core::Expected<core::Profile> approximate_stacks(const core::Profile& profile,
                                                 core::Diagnostics& diagnostics) {
  core::Profile out = profile;
  if (!profile.call_graph.present) return out;
  const auto& graph = profile.call_graph;
  diagnostics.warn(fmt::format(
      "approximating a call graph by stacks: each of the {} self costs becomes a one-frame "
      "stack (no callers); {} call edge{} (inclusive costs and call counts) and {} jump{} are "
      "dropped", profile.sample_count(), graph.calls.size(), graph.calls.size() == 1 ? "" : "s",
      graph.jumps.size(), graph.jumps.size() == 1 ? "" : "s"));
  out.call_graph = core::CallGraph{};
  return out;
}

}  // namespace tally::callgrind
