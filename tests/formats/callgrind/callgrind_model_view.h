// A view of a call-graph profile that does not depend on how the model numbers its
// locations, functions and strings: every position is spelled out (object, function, file,
// line, address), and self costs, edges and jumps are summed per spelled-out key. Two
// profiles with the same view hold the same callgrind content, whatever text they came from.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/profile.h"

namespace tally::callgrind::test {

inline std::string position_key(const core::Profile& p, core::LocationId id) {
  const core::Location& l = p.location(id);
  const std::string object = l.mapping ? std::string(p.str(p.mapping(l.mapping).file)) : "";
  std::string fn, file;
  int64_t line = 0;
  if (!l.lines.empty()) {
    const core::Function& f = p.function(l.lines[0].function);
    fn = p.str(f.name);
    file = p.str(f.filename);
    line = l.lines[0].line;
  }
  return fmt::format("{} | {} | {} | {} | {:#x}", object, fn, file, line, l.address);
}

// The "part" label of sample i (0 when the file has one part).
inline int64_t part_of(const core::Profile& p, size_t i) {
  for (const core::Label& l : p.labels(i))
    if (p.str(l.key) == "part") return l.num;
  return 0;
}

struct EdgeView {
  int64_t count = 0;
  std::vector<int64_t> inclusive;
  bool operator==(const EdgeView&) const = default;
};

struct JumpView {
  int64_t executed = 0;
  int64_t followed = 0;
  bool operator==(const JumpView&) const = default;
};

struct ModelView {
  std::vector<std::string> sample_types;  // "type/unit"
  std::vector<int64_t> totals;
  // (part label, position) -> self costs
  std::map<std::pair<int64_t, std::string>, std::vector<int64_t>> self;
  // (part index, caller, callee) -> count, inclusive
  std::map<std::tuple<uint32_t, std::string, std::string>, EdgeView> calls;
  // (part index, from, to, conditional) -> executed, followed
  std::map<std::tuple<uint32_t, std::string, std::string, bool>, JumpView> jumps;
  std::vector<core::GraphPart> parts;
  std::vector<std::string> events;  // long name and formula
  bool has_instr = false;
  bool has_line = false;
  std::vector<core::InlinedFile> inlined_files;  // sorted
};

inline void add_into(std::vector<int64_t>& sum, std::span<const int64_t> values) {
  if (sum.empty()) sum.assign(values.size(), 0);
  for (size_t k = 0; k < values.size(); ++k) sum[k] += values[k];
}

inline ModelView view_of(const core::Profile& p) {
  ModelView v;
  for (size_t k = 0; k < p.sample_types.size(); ++k) {
    v.sample_types.push_back(fmt::format("{}/{}", p.str(p.sample_types[k].type),
                                         p.str(p.sample_types[k].unit)));
    v.totals.push_back(p.total(k));
  }
  for (size_t i = 0; i < p.sample_count(); ++i) {
    const auto stack = p.stack(i);
    const std::string key = stack.size() == 1 ? position_key(p, stack[0]) : "(not one frame)";
    add_into(v.self[{part_of(p, i), key}], p.values(i));
  }
  const core::CallGraph& g = p.call_graph;
  for (const core::CallEdge& e : g.calls) {
    EdgeView& ev = v.calls[{e.part, position_key(p, e.caller), position_key(p, e.callee)}];
    ev.count += e.count;
    add_into(ev.inclusive, e.inclusive);
  }
  for (const core::Jump& j : g.jumps) {
    JumpView& jv = v.jumps[{j.part, position_key(p, j.from), position_key(p, j.to), j.conditional}];
    jv.executed += j.executed;
    jv.followed += j.followed;
  }
  v.parts = g.parts;
  // Events without a long name or formula say nothing more than the sample types (a
  // reader lists them, call_graph_from_stacks leaves the list empty).
  for (const core::EventInfo& e : g.events)
    if (!p.str(e.long_name).empty() || !e.formula.empty())
      v.events.push_back(fmt::format("{}: {} = {}", &e - g.events.data(), p.str(e.long_name), e.formula));
  v.has_instr = g.has_instr;
  v.has_line = g.has_line;
  v.inlined_files = g.inlined_files;
  std::sort(v.inlined_files.begin(), v.inlined_files.end(),
            [](const core::InlinedFile& a, const core::InlinedFile& b) {
              return std::tie(a.object, a.function, a.file, a.home) <
                     std::tie(b.object, b.function, b.file, b.home);
            });
  // A position whose costs are all zero says nothing (the writer may leave it out).
  std::erase_if(v.self, [](const auto& kv) {
    return std::all_of(kv.second.begin(), kv.second.end(), [](int64_t x) { return x == 0; });
  });
  return v;
}

// Compares two views field by field, so that a failure says which key differs.
inline void expect_same_view(const ModelView& a, const ModelView& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.sample_types, b.sample_types);
  EXPECT_EQ(a.totals, b.totals);
  EXPECT_EQ(a.self.size(), b.self.size());
  size_t reported = 0;
  for (const auto& [key, values] : a.self) {
    auto it = b.self.find(key);
    if (it == b.self.end() || it->second != values) {
      if (++reported <= 5)
        ADD_FAILURE() << "self cost of part " << key.first << " position " << key.second
                      << " differs or is missing";
    }
  }
  EXPECT_EQ(a.calls.size(), b.calls.size());
  reported = 0;
  for (const auto& [key, edge] : a.calls) {
    auto it = b.calls.find(key);
    if (it == b.calls.end() || !(it->second == edge)) {
      if (++reported <= 5)
        ADD_FAILURE() << "call edge " << std::get<1>(key) << " -> " << std::get<2>(key)
                      << " (part " << std::get<0>(key) << ") differs or is missing";
    }
  }
  EXPECT_EQ(a.jumps.size(), b.jumps.size());
  reported = 0;
  for (const auto& [key, jump] : a.jumps) {
    auto it = b.jumps.find(key);
    if (it == b.jumps.end() || !(it->second == jump)) {
      if (++reported <= 5)
        ADD_FAILURE() << "jump " << std::get<1>(key) << " -> " << std::get<2>(key)
                      << " differs or is missing";
    }
  }
  ASSERT_EQ(a.parts.size(), b.parts.size());
  for (size_t k = 0; k < a.parts.size(); ++k) {
    EXPECT_EQ(a.parts[k].header, b.parts[k].header) << "part " << k + 1;
    EXPECT_EQ(a.parts[k].summary, b.parts[k].summary) << "part " << k + 1;
    EXPECT_EQ(a.parts[k].totals, b.parts[k].totals) << "part " << k + 1;
  }
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.has_instr, b.has_instr);
  EXPECT_EQ(a.has_line, b.has_line);
  EXPECT_EQ(a.inlined_files, b.inlined_files);
}

}  // namespace tally::callgrind::test
