#include <unordered_map>

#include "core/checked_math.h"
#include "web/report_json.h"

namespace tally::web {

// Columns rather than one object per node: a 200k-node tree stays a few MB and parses fast.
nlohmann::json flame_json(const analyze::FlameTree& tree) {
  std::vector<std::string> names{"root"};
  std::unordered_map<uint32_t, uint32_t> name_index;  // tree name -> names[]
  std::vector<uint32_t> name_column, depth_column;
  std::vector<int64_t> total_column, self_column;
  std::vector<uint8_t> off_cpu_column;  // 1: drawn as off the CPU (the SVG's rule)
  if (!tree.frames.empty()) {
    // Depth-first preorder with an explicit stack (stacks can be thousands deep).
    std::vector<uint32_t> pending{0};
    while (!pending.empty()) {
      const uint32_t id = pending.back();
      pending.pop_back();
      const analyze::FlameFrame& frame = tree.frames[id];
      uint32_t name = 0;
      if (id != 0) {
        auto [it, added] = name_index.try_emplace(frame.name, static_cast<uint32_t>(names.size()));
        if (added) names.push_back(tree.names[frame.name]);
        name = it->second;
      }
      int64_t children_total = 0;
      for (uint32_t child : frame.children)
        core::accumulate_saturating(children_total, tree.frames[child].value);
      name_column.push_back(name);
      depth_column.push_back(frame.depth);
      total_column.push_back(frame.value);
      self_column.push_back(core::sub_saturating(frame.value, children_total));
      if (tree.has_off_cpu) off_cpu_column.push_back(analyze::mostly_off_cpu(frame) ? 1 : 0);
      for (auto child = frame.children.rbegin(); child != frame.children.rend(); ++child)
        pending.push_back(*child);
    }
  }
  nlohmann::json nodes = {{"name", std::move(name_column)},
                          {"depth", std::move(depth_column)},
                          {"total", std::move(total_column)},
                          {"self", std::move(self_column)}};
  // Only profiles with off-CPU time drawn (tally record --off-cpu, wall or off-cpu) have it.
  if (tree.has_off_cpu) nodes["off_cpu"] = std::move(off_cpu_column);
  return {{"total", tree.total()},
          {"unit", tree.sample_unit},
          {"warnings", tree.warnings},
          {"has_off_cpu", tree.has_off_cpu},
          {"names", std::move(names)},
          {"nodes", std::move(nodes)}};
}

}  // namespace tally::web
