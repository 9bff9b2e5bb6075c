// Test-side helpers for the callgrind tests: reading text (support/format_reads.h), and views of a call-graph
// profile taken straight from the model (sums over samples and edges by function name), not
// through the writer under test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/profile.h"
#include "formats/callgrind/callgrind.h"
#include "support/format_reads.h"
#include "support/test_support.h"

namespace tally::callgrind::test {

using tally::test::bytes_of;

struct Reader {
  static constexpr std::string_view source = "test.callgrind";
  static constexpr auto read = [](std::span<const uint8_t> bytes, const std::string& name,
                                  core::Diagnostics& diagnostics) {
    return read_profile(bytes, name, diagnostics);  // without progress reports
  };
};
inline constexpr tally::test::ReadOk<Reader> read_ok{};
inline constexpr tally::test::ReadError<Reader> read_error{};
inline constexpr tally::test::ReadFile<Reader> read_file{};

inline bool warned(const core::Diagnostics& d, std::string_view text) {
  return std::any_of(d.warnings().begin(), d.warnings().end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// The function and file of a position (its one line).
inline std::string_view function_of(const core::Profile& p, core::LocationId id) {
  const core::Location& l = p.location(id);
  return l.lines.empty() ? std::string_view() : p.str(p.function(l.lines[0].function).name);
}
inline std::string_view file_of(const core::Profile& p, core::LocationId id) {
  const core::Location& l = p.location(id);
  return l.lines.empty() ? std::string_view() : p.str(p.function(l.lines[0].function).filename);
}

// Self cost of every position of `function` (in `file` when given), sample type `type`.
inline int64_t self_cost(const core::Profile& p, std::string_view function, size_t type = 0,
                         std::string_view file = {}) {
  int64_t sum = 0;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    const core::LocationId id = p.stack(i)[0];
    if (function_of(p, id) == function && (file.empty() || file_of(p, id) == file))
      sum += p.values(i)[type];
  }
  return sum;
}

struct EdgeSum {
  int64_t count = 0;
  int64_t inclusive = 0;
  size_t edges = 0;
};

// All call edges from `caller` to `callee` (function names), summed.
inline EdgeSum calls_between(const core::Profile& p, std::string_view caller, std::string_view callee,
                             size_t type = 0) {
  EdgeSum s;
  for (const core::CallEdge& e : p.call_graph.calls) {
    if (function_of(p, e.caller) != caller || function_of(p, e.callee) != callee) continue;
    s.count += e.count;
    s.inclusive += e.inclusive[type];
    ++s.edges;
  }
  return s;
}

// The callgrind files of a shared folder (not the peers' .txt outputs nor SOURCE notes).
inline std::vector<std::string> callgrind_files(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(tally::test::shared(folder))) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (name == "SOURCE" || e.path().extension() == ".txt") continue;
    out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string test_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(uint8_t(c)); }, '_');
  return name;
}

// Names a test parameterized by a file path after the file.
inline std::string file_param_name(const ::testing::TestParamInfo<std::string>& param) {
  return test_name(param.param);
}

}  // namespace tally::callgrind::test
