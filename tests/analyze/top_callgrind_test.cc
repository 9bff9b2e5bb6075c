// `top` on the call-graph shape: on valgrind's callgrind files, flat equals
// callgrind_annotate's self cost and cum its --inclusive=yes cost, per function name
// (callgrind_annotate keys functions by file:function; code inlined from another file is
// a separate entry there, so the expectations sum its entries by function name, which is
// what pprof's function granularity gathers).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "analyze/top.h"
#include "formats/format.h"
#include "io/input.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

// callgrind_annotate's function table: "40,000,020 (39.32%)  file:function [object]",
// summed by function name. The inclusive --tree=none table has the same shape.
std::map<std::string, int64_t> annotate_by_function(const std::string& text) {
  static const std::regex row(R"(^\s*([0-9,]+) \([ 0-9.]+%\)  (.*?)(?: \[[^\]]*\])?$)");
  std::map<std::string, int64_t> out;
  std::istringstream in(text);
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.find("file:function") != std::string::npos) {
      in_table = true;
      continue;
    }
    if (in_table && !out.empty() && line.starts_with("----")) break;  // source annotation
    std::smatch m;
    if (!in_table || !std::regex_match(line, m, row)) continue;
    std::string number = m[1];
    std::erase(number, ',');
    const std::string position = m[2];
    // "file:function": the file never holds a ':' in these fixtures' paths, the function
    // name may ("std::foo").
    const std::string function = position.substr(position.find(':') + 1);
    out[function] += std::stoll(number);
  }
  return out;
}

analyze::TopReport top_of(const std::string& path) {
  auto in = io::Input::open(path);
  EXPECT_TRUE(in.has_value());
  core::Diagnostics diagnostics;
  auto profile = formats::read_profile(std::move(*in), diagnostics);
  EXPECT_TRUE(profile.has_value()) << profile.error().message;
  analyze::TopOptions options;
  options.node_fraction = 0;  // every function, as callgrind_annotate --threshold=100
  auto report = analyze::compute_top(*profile, options);
  EXPECT_TRUE(report.has_value()) << report.error().message;
  return *report;
}

class TopCallgrind : public ::testing::TestWithParam<std::string> {};

TEST_P(TopCallgrind, FlatIsSelfAndCumIsInclusive) {
  const std::string annotate = find_program("callgrind_annotate");
  TALLY_REQUIRE_PEER(annotate, "callgrind_annotate");
  const std::string file = shared("fixtures/callgrind/" + GetParam());
  RunResult self_run = run({annotate, "--threshold=100", file});
  ASSERT_EQ(self_run.exit_code, 0) << self_run.err;
  RunResult inclusive_run = run({annotate, "--threshold=100", "--inclusive=yes", file});
  ASSERT_EQ(inclusive_run.exit_code, 0) << inclusive_run.err;
  const auto self = annotate_by_function(self_run.out);
  const auto inclusive = annotate_by_function(inclusive_run.out);
  ASSERT_GT(self.size(), 10u);

  const analyze::TopReport report = top_of(file);
  ASSERT_FALSE(report.rows.empty());
  size_t compared = 0;
  for (const analyze::TopRow& row : report.rows) {
    SCOPED_TRACE(row.name);
    auto s = self.find(row.name);
    if (row.flat != 0) {
      ASSERT_NE(s, self.end());
      EXPECT_EQ(row.flat, s->second);
    }
    auto i = inclusive.find(row.name);
    ASSERT_NE(i, inclusive.end());
    EXPECT_EQ(row.cum, i->second);
    ++compared;
  }
  // Every function callgrind_annotate lists with a cost is a row.
  size_t listed = 0;
  for (const auto& [name, cost] : inclusive) listed += cost != 0;
  EXPECT_EQ(compared, listed);
  // The hot functions of the split workload are all there.
  if (GetParam() == "callgrind.out.split.default") {
    EXPECT_EQ(report.rows[0].name, "func_a");
    EXPECT_EQ(report.rows[3].name, "func_d");
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TopCallgrind,
                         ::testing::Values("callgrind.out.split.default",
                                           "callgrind.out.deep.default",
                                           "callgrind.out.shlib.default"));

}  // namespace
}  // namespace tally::test
