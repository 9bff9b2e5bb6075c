#include "analyze/flame_tree.h"

#include <algorithm>
#include <cmath>

#include "analyze/top.h"
#include "core/checked_math.h"
#include "core/hash.h"

namespace tally::analyze {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

// The merged tree while samples are added: flat arrays and sibling lists, no per-frame
// allocation, since a profile with many unique stacks has millions of frames.
class StackMerger {
 public:
  StackMerger() { add_frame(kNone, 0); }

  // The child of `parent` for report node `node`, created when new.
  uint32_t child(uint32_t parent, NodeId node) {
    if (2 * (size() + 1) > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash(parent, node) & mask;; i = (i + 1) & mask) {
      const uint32_t f = slots_[i];
      if (f == kNone) {
        const uint32_t fresh = add_frame(parent, node);
        slots_[i] = fresh;
        return fresh;
      }
      if (parent_[f] == parent && node_[f] == node) return f;
    }
  }
  void add(uint32_t frame, int64_t w) { core::accumulate_saturating(value_[frame], w); }
  void add_off_cpu(uint32_t frame, int64_t w) { core::accumulate_saturating(off_cpu_[frame], w); }
  int64_t off_cpu(uint32_t f) const { return off_cpu_[f]; }

  uint32_t size() const { return static_cast<uint32_t>(node_.size()); }
  uint32_t parent(uint32_t f) const { return parent_[f]; }
  NodeId node(uint32_t f) const { return node_[f]; }
  int64_t value(uint32_t f) const { return value_[f]; }
  uint32_t first_child(uint32_t f) const { return first_child_[f]; }
  uint32_t next_sibling(uint32_t f) const { return next_sibling_[f]; }

 private:
  static size_t hash(uint32_t parent, NodeId node) {
    return static_cast<size_t>(core::mix64((uint64_t(parent) << 32) | node));
  }
  uint32_t add_frame(uint32_t parent, NodeId node) {
    const uint32_t f = size();
    parent_.push_back(parent);
    node_.push_back(node);
    value_.push_back(0);
    off_cpu_.push_back(0);
    first_child_.push_back(kNone);
    next_sibling_.push_back(parent == kNone ? kNone : first_child_[parent]);
    if (parent != kNone) first_child_[parent] = f;
    return f;
  }
  void grow() {
    slots_.assign(std::max<size_t>(1024, slots_.size() * 2), kNone);
    const size_t mask = slots_.size() - 1;
    for (uint32_t f = 1; f < size(); ++f) {
      size_t i = hash(parent_[f], node_[f]) & mask;
      while (slots_[i] != kNone) i = (i + 1) & mask;
      slots_[i] = f;
    }
  }

  std::vector<uint32_t> parent_, node_, first_child_, next_sibling_;
  std::vector<int64_t> value_, off_cpu_;
  std::vector<uint32_t> slots_;  // open addressing on (parent, node); frame ids
};

// Renumbers the frames reachable from the root into preorder (children in their order)
// and lays them out: a child starts where its previous sibling ended, the first child at
// its parent's start, so every frame's subtree is one contiguous range of offsets.
void renumber_preorder(FlameTree& tree) {
  std::vector<FlameFrame> old = std::move(tree.frames);
  tree.frames.clear();
  tree.frames.reserve(old.size());
  struct Pending {
    uint32_t old_id, new_parent;
    int64_t start;
  };
  std::vector<Pending> stack{{0, 0, 0}};
  while (!stack.empty()) {
    const Pending p = stack.back();
    stack.pop_back();
    const auto id = static_cast<uint32_t>(tree.frames.size());
    FlameFrame f = std::move(old[p.old_id]);
    f.parent = id == 0 ? 0 : p.new_parent;
    f.start = p.start;
    std::vector<uint32_t> children = std::move(f.children);
    f.children.clear();
    tree.frames.push_back(std::move(f));
    // Pushed last-first so the first child is numbered next; each child adds itself to
    // its parent's list when numbered, so the lists come out in order. The starts are
    // summed first to last: at the int64 limit they saturate (frames then overlap at the
    // right edge) instead of overflowing.
    const size_t first_pending = stack.size();
    int64_t start = p.start;
    for (uint32_t c : children) {
      stack.push_back({c, id, start});
      start = core::add_saturating(start, old[c].value);
    }
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first_pending), stack.end());
    if (id != 0) tree.frames[tree.frames[id].parent].children.push_back(id);
  }
}

}  // namespace

uint32_t FlameTree::max_depth() const {
  uint32_t d = 0;
  for (const FlameFrame& f : frames) d = std::max(d, f.depth);
  return d;
}

core::Expected<FlameTree> build_flame_tree(const core::Profile& p,
                                           const FlameTreeOptions& options) {
  if (p.call_graph.present)
    return core::Error{"a call-graph profile (callgrind) has no stacks to draw a flame graph "
                       "from; use a sampled profile (pprof, perf, gperftools, folded)",
                       core::ErrorKind::unsupported};
  auto value = report_value_index(p, options.sample_index);
  if (!value) return value.error();
  auto filter = LocationFilter::create(p, options.filters);
  if (!filter) return filter.error();
  const NodeIndex nodes(p, options.nodes, &*filter);

  FlameTree tree;
  tree.sample_type = std::string(p.str(p.sample_types[*value].type));
  tree.sample_unit = std::string(p.str(p.sample_types[*value].unit));
  for (const std::string& f : filter->unmatched())
    tree.warnings.push_back("--" + f + " matched no frame");
  for (std::string& w : filter->label_warnings()) tree.warnings.push_back(std::move(w));

  // tally record --off-cpu profiles: the part of each frame's width spent off the CPU,
  // when the value drawn includes it (wall, off-cpu), so that the SVG colours it apart.
  const int off_cpu_type = p.sample_type_index("off-cpu");
  const bool with_off_cpu = off_cpu_type >= 0 && (tree.sample_type == "wall" ||
                                                  tree.sample_type == "off-cpu");
  StackMerger merged;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    if (p.values(s)[*value] <= 0) continue;
    const auto stack = p.stack(s);
    if (!filter->keeps(s, stack)) continue;
    const int64_t w = filter->value(p, s, *value);
    const int64_t off =
        with_off_cpu ? std::min(w, filter->value(p, s, static_cast<size_t>(off_cpu_type))) : 0;
    uint32_t at = 0;
    merged.add(0, w);
    if (off > 0) merged.add_off_cpu(0, off);
    for (size_t i = stack.size(); i-- > 0;) {  // root first
      const auto ns = nodes.nodes(stack[i]);
      for (size_t k = ns.size(); k-- > 0;) {  // outermost inline frame first
        at = merged.child(at, ns[k]);
        merged.add(at, w);
        if (off > 0) merged.add_off_cpu(at, off);
      }
    }
  }
  tree.has_off_cpu = with_off_cpu;

  // Subtree sizes (children are created after their parents), for the merged counts.
  const uint32_t n = merged.size();
  std::vector<uint32_t> subtree(n, 1);
  for (uint32_t f = n; f-- > 1;) subtree[merged.parent(f)] += subtree[f];
  const int64_t min_value =
      options.min_fraction > 0
          ? core::to_int64_saturating(
                std::ceil(static_cast<double>(merged.value(0)) * options.min_fraction))
          : 0;

  // Copy out the kept frames, children by name, then number them in preorder.
  std::vector<uint32_t> name_of_node(nodes.size(), kNone);
  auto name_index = [&](NodeId node) {
    if (name_of_node[node] == kNone) {
      name_of_node[node] = static_cast<uint32_t>(tree.names.size());
      tree.names.push_back(nodes.name(node));
    }
    return name_of_node[node];
  };
  tree.names.push_back("all");
  auto add_frame = [&](uint32_t name, uint32_t parent, uint32_t depth, uint32_t from) {
    FlameFrame f;
    f.name = name;
    f.parent = parent;
    f.depth = depth;
    f.value = merged.value(from);
    f.off_cpu = merged.off_cpu(from);
    tree.frames.push_back(std::move(f));
  };
  add_frame(0, 0, 0, 0);
  std::vector<uint32_t> pending{0}, source{0};  // output frame -> merged frame
  while (!pending.empty()) {
    const uint32_t out = pending.back();
    pending.pop_back();
    const uint32_t from = source[out];
    for (uint32_t c = merged.first_child(from); c != kNone; c = merged.next_sibling(c)) {
      if (merged.value(c) < min_value) {
        tree.frames[out].merged_frames += subtree[c];
        tree.merged_frames += subtree[c];
        continue;
      }
      const auto id = static_cast<uint32_t>(tree.frames.size());
      add_frame(name_index(merged.node(c)), out, tree.frames[out].depth + 1, c);
      tree.frames[out].children.push_back(id);
      source.push_back(c);
      pending.push_back(id);
    }
    std::vector<uint32_t>& children = tree.frames[out].children;
    std::sort(children.begin(), children.end(), [&](uint32_t a, uint32_t b) {
      return tree.names[tree.frames[a].name] < tree.names[tree.frames[b].name];
    });
  }
  renumber_preorder(tree);
  return tree;
}

void prune_flame_tree(FlameTree& tree, int64_t min_value) {
  if (tree.frames.empty()) return;
  // Subtree sizes, from the preorder numbering: children come after their parent.
  std::vector<uint32_t> size(tree.frames.size(), 1);
  for (size_t i = tree.frames.size(); i-- > 1;) size[tree.frames[i].parent] += size[i];
  for (FlameFrame& f : tree.frames) {
    auto narrow = [&](uint32_t c) { return tree.frames[c].value < min_value; };
    for (uint32_t c : f.children)
      if (narrow(c)) f.merged_frames += size[c];
    std::erase_if(f.children, narrow);
  }
  // Frames under a removed frame are unreachable now and go with it.
  const size_t before = tree.frames.size();
  renumber_preorder(tree);
  tree.merged_frames += before - tree.frames.size();
}

}  // namespace tally::analyze
