#include <unordered_map>

#include "web/report_json.h"

namespace tally::web {

// Columns rather than one object per node: a 200k-node tree stays a few MB and parses fast.
nlohmann::json flame_json(const analyze::FlameTree& tree) {
  std::vector<std::string> names{"root"};
  std::unordered_map<uint32_t, uint32_t> name_index;  // tree name -> names[]
  std::vector<uint32_t> name_column, depth_column;
  std::vector<int64_t> total_column, self_column;
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
      for (uint32_t child : frame.children) children_total += tree.frames[child].value;
      name_column.push_back(name);
      depth_column.push_back(frame.depth);
      total_column.push_back(frame.value);
      self_column.push_back(frame.value - children_total);
      for (auto child = frame.children.rbegin(); child != frame.children.rend(); ++child)
        pending.push_back(*child);
    }
  }
  return {{"total", tree.total()},
          {"unit", tree.sample_unit},
          {"warnings", tree.warnings},
          {"names", std::move(names)},
          {"nodes",
           {{"name", std::move(name_column)},
            {"depth", std::move(depth_column)},
            {"total", std::move(total_column)},
            {"self", std::move(self_column)}}}};
}

}  // namespace tally::web
