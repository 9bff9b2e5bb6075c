// The reports on sample values at the int64 limits, which files may hold: totals, sums and
// negations saturate at 9223372036854775807 (|INT64_MIN| too) instead of wrapping (as they
// did in release, printing "3 total" and flat% of 307445734561825816576%) or aborting under
// UBSan. Run through the tally binary, as a user would meet them.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "core/profile.h"
#include "formats/format.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
const std::string kMaxText = "9223372036854775807";

bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& l : text_lines(text))
    if (l == line) return true;
  return false;
}

// Every "NN.NN%" (or "NN%") in the text: a share of a saturated total is at most 100%.
std::vector<double> percentages(const std::string& text) {
  std::vector<double> out;
  for (size_t at = text.find('%'); at != std::string::npos; at = text.find('%', at + 1)) {
    size_t begin = at;
    while (begin > 0 && (std::isdigit(static_cast<unsigned char>(text[begin - 1])) ||
                         text[begin - 1] == '.' || text[begin - 1] == 'e' || text[begin - 1] == '-'))
      --begin;
    if (begin < at) out.push_back(std::strtod(text.substr(begin, at - begin).c_str(), nullptr));
  }
  return out;
}

void expect_sane_percentages(const std::string& text) {
  const std::vector<double> found = percentages(text);
  EXPECT_FALSE(found.empty()) << text;
  for (double p : found) {
    EXPECT_GE(p, 0) << text;
    EXPECT_LE(p, 100) << text;
  }
}

// Two stacks of INT64_MAX and one of 5: the exact total (2^64 + 3) does not fit.
std::string big_folded(const TempDir& dir) {
  const std::string path = dir.file("big.folded");
  write_bytes(path, "main;a " + kMaxText + "\nmain;b " + kMaxText + "\nmain;c 5\n");
  return path;
}

// The same stacks in a pprof file with INT64_MIN for a and b, which folded text cannot
// hold (a negative count is refused there) but pprof can.
std::string min_pprof(const TempDir& dir) {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count")};
  auto location = [&](const char* name) {
    const core::FunctionId f = p.add_function({.name = p.intern(name)});
    return p.add_location({.address = 0x1000 + p.locations.size(), .lines = {{.function = f}}});
  };
  const core::LocationId main = location("main"), a = location("a"), b = location("b"),
                         c = location("c");
  for (auto [leaf, value] : {std::pair{a, kMin}, std::pair{b, kMin}, std::pair{c, int64_t{5}}}) {
    const core::LocationId stack[] = {leaf, main};
    const int64_t values[] = {value};
    p.add_sample(stack, values);
  }
  core::Diagnostics diagnostics;
  auto files = formats::write_profile(std::move(p), formats::Format::pprof, diagnostics);
  EXPECT_TRUE(files.has_value());
  const std::string path = dir.file("min.pb.gz");
  write_bytes(path, files->front().bytes);
  return path;
}

TEST(SaturatedTotals, TopOfValuesBeyondTheLimitShowsTheLimitAndShares) {
  TempDir dir;
  const RunResult r = run_tally({"top", big_folded(dir)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_line(r.out, "Showing nodes accounting for " + kMaxText + ", 100% of " + kMaxText +
                                  " total"))
      << r.out;
  // a and b are each the whole (saturated) total; the running sum stays at it.
  const std::vector<TopRow> rows = top_rows(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;  // c (5) is under the node fraction
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rows[i].flat, kMaxText);
    EXPECT_EQ(rows[i].flat_percent, "100%");
    EXPECT_EQ(rows[i].sum_percent, "100%");
  }
  EXPECT_EQ(rows[2].name.substr(0, 4), "main");
  EXPECT_EQ(rows[2].cum, kMaxText);
  EXPECT_EQ(r.out.find('-'), std::string::npos) << "no negative number: " << r.out;
  expect_sane_percentages(r.out);
}

TEST(SaturatedTotals, ThreadTotalsSaturate) {
  TempDir dir;
  const RunResult r = run_tally({"top", "--threads", big_folded(dir)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" " + kMaxText + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("-9"), std::string::npos) << r.out;
}

TEST(SaturatedTotals, TreePeekAndTracesShowTheLimit) {
  TempDir dir;
  const std::string file = big_folded(dir);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"tree", file}, {"peek", "main", file}}) {
    const RunResult r = run_tally(args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    // main's callees a and b: each edge is the whole of main's (saturated) cum.
    EXPECT_TRUE(has_line(r.out, std::string(31, ' ') + kMaxText + "   100% |   a")) << r.out;
    EXPECT_TRUE(has_line(r.out, std::string(31, ' ') + kMaxText + "   100% |   b")) << r.out;
    expect_sane_percentages(r.out);
  }
  const RunResult traces = run_tally({"traces", file});
  ASSERT_EQ(traces.exit_code, 0) << traces.err;
  EXPECT_TRUE(has_line(traces.out, kMaxText + "   a")) << traces.out;
}

TEST(SaturatedTotals, FlameGraphRootIsTheLimit) {
  TempDir dir;
  const std::string svg = dir.file("big.svg");
  const RunResult r = run_tally({"flame", big_folded(dir), "-o", svg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(svg);
  EXPECT_NE(text.find("<title>all (" + kMaxText + ", 100.00%)"), std::string::npos);
  EXPECT_NE(text.find("<title>a (" + kMaxText + ", 100.00%)"), std::string::npos);
}

TEST(SaturatedTotals, DiffOfAProfileWithItselfChangesNothing) {
  TempDir dir;
  const std::string file = big_folded(dir);
  const RunResult r = run_tally({"diff", file, file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_line(r.out, "Base: total " + kMaxText + " in " + kMaxText + " samples")) << r.out;
  size_t rows = 0;
  for (const std::string& line : text_lines(r.out)) {
    if (!line.ends_with(" a") && !line.ends_with(" b") && !line.ends_with(" main")) continue;
    ++rows;
    EXPECT_NE(line.find(" +0.00pp "), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 3u) << r.out;
}

TEST(SaturatedTotals, MinimumValuesInPprofHaveAnAbsoluteTotalAtTheLimit) {
  TempDir dir;
  const std::string file = min_pprof(dir);
  const RunResult top = run_tally({"top", file});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  // |INT64_MIN| + |INT64_MIN| + 5 saturates at INT64_MAX.
  EXPECT_NE(top.out.find("of " + kMaxText + " total"), std::string::npos) << top.out;
  const std::vector<TopRow> rows = top_rows(top.out);
  ASSERT_GE(rows.size(), 2u) << top.out;
  EXPECT_EQ(rows[0].flat, "-9223372036854775808");
  EXPECT_EQ(rows[0].flat_percent, "100%");
  EXPECT_EQ(rows[1].sum_percent, "100%");  // INT64_MIN + INT64_MIN stays at INT64_MIN
  expect_sane_percentages(top.out);

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"tree", file}, {"peek", "main", file}}) {
    const RunResult r = run_tally(args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    // An edge of INT64_MIN is as heavy as the whole total: 100%, first among main's callees.
    EXPECT_TRUE(has_line(r.out, std::string(30, ' ') + "-9223372036854775808   100% |   a"))
        << r.out;
    expect_sane_percentages(r.out);
  }
  // A flame graph draws only positive values: c alone.
  const std::string svg = dir.file("min.svg");
  const RunResult flame = run_tally({"flame", file, "-o", svg});
  ASSERT_EQ(flame.exit_code, 0) << flame.err;
  EXPECT_NE(read_text(svg).find("<title>all (5, 100.00%)"), std::string::npos);
}

}  // namespace
}  // namespace tally::test
