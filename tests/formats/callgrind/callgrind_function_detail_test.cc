// The read by function (core::PositionDetail::functions) against the full read, on every
// real callgrind file of ../shared: the same self cost per function and sample type, the
// same inclusive costs and call counts per caller -> callee function, the same parts, and
// counts of the positions, samples, call edges and jumps the full read makes (cat
// --summary); and one location per (object, function), however many instructions the
// file lists.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "callgrind_test_helpers.h"

namespace tally::callgrind::test {
namespace {

core::Profile read_with(const std::vector<uint8_t>& bytes, const std::string& name,
                        core::PositionDetail detail, core::PositionCounts* counts = nullptr) {
  core::Diagnostics d;
  auto p = read_profile(bytes, name, d, nullptr, nullptr, detail, counts);
  if (!p) throw std::runtime_error("unexpected read error: " + p.error().message);
  return std::move(p).value();
}

// A function as reports name it: object, function name, its file.
using FunctionKey = std::tuple<std::string, std::string, std::string>;

FunctionKey key_of(const core::Profile& p, core::LocationId id) {
  const core::Location& l = p.location(id);
  const std::string object(l.mapping ? p.str(p.mapping(l.mapping).file) : "");
  return {object, std::string(function_of(p, id)), std::string(file_of(p, id))};
}

// (function, part label) -> self cost per sample type.
std::map<std::pair<FunctionKey, int64_t>, std::vector<int64_t>> self_by_function(
    const core::Profile& p) {
  std::map<std::pair<FunctionKey, int64_t>, std::vector<int64_t>> out;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const auto labels = p.labels(s);
    const int64_t part = labels.empty() ? 0 : labels[0].num;
    auto& sum = out[{key_of(p, p.stack(s)[0]), part}];
    const auto values = p.values(s);
    sum.resize(values.size(), 0);
    for (size_t i = 0; i < values.size(); ++i) sum[i] += values[i];
  }
  return out;
}

struct EdgeSum {
  int64_t count = 0;
  std::vector<int64_t> inclusive;
  bool operator==(const EdgeSum&) const = default;
};

// (caller, callee, part) -> call count and inclusive cost per sample type.
std::map<std::tuple<FunctionKey, FunctionKey, uint32_t>, EdgeSum> edges_by_function(
    const core::Profile& p) {
  std::map<std::tuple<FunctionKey, FunctionKey, uint32_t>, EdgeSum> out;
  for (const core::CallEdge& e : p.call_graph.calls) {
    EdgeSum& sum = out[{key_of(p, e.caller), key_of(p, e.callee), e.part}];
    sum.count += e.count;
    sum.inclusive.resize(e.inclusive.size(), 0);
    for (size_t i = 0; i < e.inclusive.size(); ++i) sum.inclusive[i] += e.inclusive[i];
  }
  return out;
}

std::set<FunctionKey> functions_of_locations(const core::Profile& p) {
  std::set<FunctionKey> out;
  for (core::LocationId id = 1; id <= p.locations.size(); ++id) out.insert(key_of(p, id));
  return out;
}

std::vector<std::string> every_callgrind_file() {
  std::vector<std::string> files = callgrind_files("conformance/callgrind");
  for (const std::string& f : callgrind_files("fixtures/callgrind")) files.push_back(f);
  return files;
}

TEST(CallgrindFunctionDetail, SameSelfCostsAndCallEdgesPerFunctionAsTheFullRead) {
  size_t files_with_instructions = 0;
  for (const std::string& path : every_callgrind_file()) {
    SCOPED_TRACE(path);
    const std::vector<uint8_t> bytes = tally::test::read_bytes(path);
    const core::Profile full = read_with(bytes, path, core::PositionDetail::full);
    core::PositionCounts counts;
    const core::Profile by_function =
        read_with(bytes, path, core::PositionDetail::functions, &counts);
    EXPECT_EQ(self_by_function(by_function), self_by_function(full));
    // What `tally cat --summary` prints: the full read's numbers, counted without it.
    EXPECT_TRUE(counts.counted);
    EXPECT_EQ(counts.locations, full.locations.size());
    EXPECT_EQ(counts.samples, full.sample_count());
    EXPECT_EQ(counts.calls, full.call_graph.calls.size());
    EXPECT_EQ(counts.jumps, full.call_graph.jumps.size());
    EXPECT_EQ(edges_by_function(by_function), edges_by_function(full));
    EXPECT_EQ(by_function.sample_types.size(), full.sample_types.size());
    EXPECT_EQ(by_function.functions.size(), full.functions.size());
    EXPECT_EQ(by_function.call_graph.parts.size(), full.call_graph.parts.size());
    EXPECT_EQ(by_function.call_graph.inlined_files.size(), full.call_graph.inlined_files.size());
    for (size_t t = 0; t < full.sample_types.size(); ++t) EXPECT_EQ(by_function.total(t), full.total(t));
    // One location per (object, function, file), at no address and no line; code inlined
    // from a file into functions of other files is one more per such home file.
    EXPECT_GE(by_function.locations.size(), functions_of_locations(full).size());
    EXPECT_LE(by_function.locations.size(),
              functions_of_locations(full).size() + full.call_graph.inlined_files.size());
    EXPECT_EQ(functions_of_locations(by_function), functions_of_locations(full));
    for (const core::Location& l : by_function.locations) {
      EXPECT_EQ(l.address, 0u);
      ASSERT_EQ(l.lines.size(), 1u);
      EXPECT_EQ(l.lines[0].line, 0);
    }
    if (full.call_graph.has_instr && full.locations.size() > 2 * by_function.locations.size())
      ++files_with_instructions;
  }
  // The comparison means something only if some files list many positions per function.
  EXPECT_GE(files_with_instructions, 1u);
}

// A function with N instructions, each its own cost line, calling one other function from
// every instruction: the full read makes N + 1 locations, the read by function 2 and one edge.
std::string one_function_with_instructions(int n) {
  std::string text = "positions: instr line\nevents: Ir\nob=a.out\nfl=f.c\nfn=f\n";
  for (int i = 0; i < n; ++i) {
    text += "0x" + std::to_string(1000 + i) + " " + std::to_string(10 + i % 7) + " 3\n";
    text += "cfn=g\ncalls=1 0x9000 1\n0x" + std::to_string(1000 + i) + " " +
            std::to_string(10 + i % 7) + " 5\n";
  }
  return text;
}

TEST(CallgrindFunctionDetail, LocationsDoNotGrowWithInstructions) {
  for (int n : {1, 10, 5000}) {
    SCOPED_TRACE(n);
    const std::string text = one_function_with_instructions(n);
    const std::vector<uint8_t> bytes(text.begin(), text.end());
    const core::Profile full = read_with(bytes, "f", core::PositionDetail::full);
    const core::Profile by_function = read_with(bytes, "f", core::PositionDetail::functions);
    EXPECT_EQ(full.locations.size(), size_t(n) + 1);
    EXPECT_EQ(by_function.locations.size(), 2u);
    EXPECT_EQ(by_function.functions.size(), 2u);
    EXPECT_EQ(by_function.sample_count(), 1u);
    ASSERT_EQ(by_function.call_graph.calls.size(), 1u);
    EXPECT_EQ(by_function.call_graph.calls[0].count, n);
    EXPECT_EQ(by_function.call_graph.calls[0].inclusive[0], 5 * n);
    EXPECT_EQ(by_function.total(0), 3 * n);
    EXPECT_EQ(full.total(0), 3 * n);
  }
}

}  // namespace
}  // namespace tally::callgrind::test
