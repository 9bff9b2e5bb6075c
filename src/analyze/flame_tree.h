// The flame graph's data: every sample's stack merged into one tree (root "all", each
// child a frame called from its parent, keyed by the frame's report node), with the
// chosen value summed on each node. Children are ordered by name, as FlameGraph does,
// so the same profile always gives the same tree. Pruning folds the frames too narrow
// to draw into their parent, which keeps the SVG small on profiles with many stacks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/nodes.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct FlameTreeOptions {
  NodeOptions nodes;
  NameFilters filters;
  std::string sample_index;  // as for top: name, type/unit or index; "" = default
  // Frames narrower than this fraction of the total are folded into their parent while
  // the tree is built (as prune_flame_tree does), so a huge profile never holds its full
  // tree in the output. 0 keeps every frame.
  double min_fraction = 0;
};

struct FlameFrame {
  uint32_t name = 0;    // index into FlameTree::names
  uint32_t parent = 0;  // the root is its own parent
  uint32_t depth = 0;   // root 0
  int64_t value = 0;    // the samples this frame is on (its width)
  int64_t start = 0;    // offset of the frame's left edge, in value units (layout)
  std::vector<uint32_t> children;  // ordered by name
  uint32_t merged_frames = 0;      // tiny descendants folded into this frame by pruning
  int64_t off_cpu = 0;  // of `value`, the part off the CPU (tally record --off-cpu profiles)
};

// Whether a frame is drawn as off the CPU (a cool colour, as FlameGraph's off-CPU graphs):
// more than half of its width was spent off the CPU. The SVG and the web flame graph both
// ask this (off_cpu <= value, so the difference cannot overflow).
inline bool mostly_off_cpu(const FlameFrame& frame) { return frame.off_cpu > frame.value - frame.off_cpu; }

struct FlameTree {
  std::vector<std::string> names;   // [0] = "all"
  std::vector<FlameFrame> frames;   // [0] = the root; in preorder, `start` set
  std::string sample_type, sample_unit;
  size_t merged_frames = 0;         // frames removed by pruning, over the whole tree
  bool has_off_cpu = false;         // frames' off_cpu parts are set (wall / off-cpu drawn)
  std::vector<std::string> warnings;

  int64_t total() const { return frames.empty() ? 0 : frames[0].value; }
  uint32_t max_depth() const;
};

// Merges the samples' stacks (root first) into a tree, pruned to options.min_fraction. Samples whose chosen value is not
// positive are skipped: a flame graph has no negative widths. Call-graph profiles have no
// stacks and are refused (ErrorKind::unsupported).
core::Expected<FlameTree> build_flame_tree(const core::Profile& profile,
                                           const FlameTreeOptions& options);

// Removes every frame whose value is below `min_value`, with its subtree; its value stays
// in its parent's width (as self cost), and the parent counts the frames it absorbed.
void prune_flame_tree(FlameTree& tree, int64_t min_value);

}  // namespace tally::analyze
