// The report pipeline below the CLI (issue 19): read_report_input reads and symbolizes a
// profile as the report commands do, so a report computed on it in-process (as tally serve
// does) prints exactly what `tally top` prints; and node_report's trimming, shared by top
// and tree, on hand-made values.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "analyze/node_report.h"
#include "analyze/report_input.h"
#include "analyze/top.h"
#include "analyze/top_text.h"
#include "core/diagnostics.h"
#include "support/test_support.h"

namespace tally::analyze {
namespace {

ReportInput gperf_split(bool symbolize) {
  ReportInput input;
  input.file = test::shared("fixtures/gperf/split.prof");
  input.symbolize.enabled = symbolize;
  input.symbolize.binary_paths = {test::shared("fixtures/bin")};
  input.symbolize.debuginfod = false;
  return input;
}

TEST(ReportInput, GperfProfileSymbolizedGivesTheCliTopByteForByte) {
  core::Diagnostics diagnostics;
  auto profile = read_report_input(gperf_split(true), diagnostics);
  ASSERT_TRUE(profile) << profile.error().message;
  auto top = compute_top(*profile, TopOptions{});
  ASSERT_TRUE(top) << top.error().message;
  const std::string text = format_top(*top);
  EXPECT_NE(text.find(" func_a\n"), std::string::npos) << text;

  const auto cli = test::run_tally({"top", "--no-debuginfod", "--binary-path",
                                    test::shared("fixtures/bin"),
                                    test::shared("fixtures/gperf/split.prof")});
  ASSERT_EQ(cli.exit_code, 0) << cli.describe();
  EXPECT_EQ(text, cli.out);
}

TEST(ReportInput, WithoutSymbolizingAddressesStayUnnamed) {
  core::Diagnostics diagnostics;
  auto profile = read_report_input(gperf_split(false), diagnostics);
  ASSERT_TRUE(profile) << profile.error().message;
  ASSERT_FALSE(profile->locations.empty());
  for (const core::Location& l : profile->locations) EXPECT_TRUE(l.lines.empty());
}

TEST(ReportInput, MissingFileIsAnIoErrorNamingIt) {
  core::Diagnostics diagnostics;
  ReportInput input;
  input.file = "/nonexistent/dir/cpu.prof";
  auto profile = read_report_input(input, diagnostics);
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().kind, core::ErrorKind::io);
  EXPECT_NE(profile.error().message.find("/nonexistent/dir/cpu.prof"), std::string::npos)
      << profile.error().message;
}

TEST(ReportInput, DatabaseSelectionIsReadInsteadOfTheFile) {
  // The file exists but --db names a missing database: the database is what is read.
  core::Diagnostics diagnostics;
  ReportInput input = gperf_split(true);
  input.db.db = "/nonexistent/tally-db";
  auto profile = read_report_input(input, diagnostics);
  ASSERT_FALSE(profile);
  EXPECT_NE(profile.error().message.find("/nonexistent/tally-db"), std::string::npos)
      << profile.error().message;
}


TEST(NodeReport, TrimDropsUnderTheFractionSortsWithNameTiesAndCounts) {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count")};
  for (const char* name : {"c", "b", "d", "a"}) {
    const auto f = p.add_function({.name = p.intern(name)});
    p.add_location({.address = 0x10u + p.locations.size(), .lines = {{.function = f}}});
  }
  const NodeIndex index(p, NodeOptions{});
  const std::map<std::string, std::pair<int64_t, int64_t>> values = {
      {"a", {30, 30}}, {"b", {30, 50}}, {"c", {5, 5}}, {"d", {0, 0}}};
  std::vector<int64_t> flat(index.size()), cum(index.size());
  for (NodeId n = 0; n < index.size(); ++n) {
    const auto it = values.find(index.name(n));
    ASSERT_NE(it, values.end()) << index.name(n);
    flat[n] = it->second.first;
    cum[n] = it->second.second;
  }
  // Graph total 65: a 10% fraction drops nodes under 6.5 -> 6 of cum (c); d has no cost
  // and is no node of the graph at all.
  const TrimmedNodes by_flat = trim_nodes(index, flat, cum, {.node_fraction = 0.1});
  EXPECT_EQ(by_flat.names, (std::vector<std::string>{"a", "b"}));  // flat tie: by name
  EXPECT_EQ(by_flat.dropped, 1u);
  EXPECT_EQ(by_flat.before_count, 2u);

  const TrimmedNodes by_cum =
      trim_nodes(index, flat, cum, {.node_fraction = 0.1, .sort_by_cum = true});
  EXPECT_EQ(by_cum.names, (std::vector<std::string>{"b", "a"}));

  const TrimmedNodes first =
      trim_nodes(index, flat, cum, {.node_fraction = 0, .node_count = 2, .sort_by_cum = true});
  EXPECT_EQ(first.names, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(first.dropped, 0u);
  EXPECT_EQ(first.before_count, 3u);  // a, b, c before --nodecount
  ASSERT_EQ(first.nodes.size(), 2u);
  EXPECT_EQ(index.name(first.nodes[0]), "b");
}

}  // namespace
}  // namespace tally::analyze
