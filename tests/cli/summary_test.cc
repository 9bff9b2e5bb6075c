// `tally cat --summary` on every gperf fixture must give the totals that the fixtures'
// README documents (samples, records, unique stacks, max depth): the table is read from
// shared/fixtures/README.md itself, so the test follows the files it describes.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "gperf_decoder.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

struct DocumentedTotals {
  std::string samples, records, unique_stacks, max_depth;
};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" `"), e = s.find_last_not_of(" `");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Rows "| `NAME.prof` | run | F | samples | records | unique stacks | max depth |".
std::map<std::string, DocumentedTotals> readme_table() {
  std::map<std::string, DocumentedTotals> table;
  std::istringstream lines(read_text(shared("fixtures/README.md")));
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("| `") || line.find(".prof` |") == std::string::npos) continue;
    std::vector<std::string> cells;
    std::istringstream row(line.substr(1));
    std::string cell;
    while (std::getline(row, cell, '|')) cells.push_back(trim(cell));
    if (cells.size() < 7) continue;
    std::string name = cells[0].substr(0, cells[0].size() - std::string(".prof").size());
    table[name] = {cells[3], cells[4], cells[5], cells[6]};
  }
  return table;
}

// The value after "KEY" at the start of a summary line ("total samples   276 count").
std::string summary_value(const std::string& out, const std::string& key) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with(key + " ")) continue;
    std::istringstream rest(line.substr(key.size()));
    std::string value;
    rest >> value;
    return value;
  }
  return "(no '" + key + "' line)";
}

TEST(CatSummary, EveryFixtureMatchesTheReadmeTable) {
  const auto table = readme_table();
  ASSERT_EQ(table.size(), gperf_fixtures().size()) << "README table rows not found";
  for (const GperfFixture& f : gperf_fixtures()) {
    SCOPED_TRACE(f.name);
    ASSERT_EQ(table.count(f.name), 1u);
    const DocumentedTotals& want = table.at(f.name);
    const std::string path = shared("fixtures/gperf/" + f.name + ".prof");
    RunResult r = run_tally({"cat", "--summary", path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(summary_value(r.out, "total samples"), want.samples) << r.out;
    EXPECT_EQ(summary_value(r.out, "gperf.records"), want.records) << r.out;
    EXPECT_EQ(summary_value(r.out, "distinct stacks"), want.unique_stacks) << r.out;
    EXPECT_EQ(summary_value(r.out, "max depth"), want.max_depth) << r.out;
    EXPECT_EQ(summary_value(r.out, "format"), "gperf") << r.out;
    // And the README agrees with the bytes of the file.
    const DecodedGperf decoded = decode_gperf64le(read_bytes(path));
    EXPECT_EQ(std::to_string(decoded.total_samples()), want.samples);
    EXPECT_EQ(std::to_string(decoded.records.size()), want.records);
    EXPECT_EQ(std::to_string(merged_stacks(decoded).size()), want.unique_stacks);
  }
}

TEST(CatSummary, TotalCpuIsSamplesTimesThePeriod) {
  // split-f100 was recorded at 100 Hz: 10 ms per sample.
  RunResult r = run_tally({"cat", "--summary", shared("fixtures/gperf/split-f100.prof")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary_value(r.out, "total cpu"), std::to_string(111ull * 10'000'000)) << r.out;
  EXPECT_EQ(summary_value(r.out, "period"), "10000000") << r.out;
}

TEST(CatSummary, ReadsFromStandardInput) {
  RunResult r = run_tally({"cat", "--summary", "-"},
                          read_text(shared("fixtures/gperf/split-mt.prof")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary_value(r.out, "file"), "<stdin>") << r.out;
  EXPECT_EQ(summary_value(r.out, "total samples"), "491") << r.out;
  EXPECT_EQ(summary_value(r.out, "distinct stacks"), "8") << r.out;
}

// A sample type name longer than the label column (callgrind event names can be) widens
// the column: every value starts at the same place, after a space.
TEST(CatSummary, LongSampleTypeNamesDoNotRunIntoTheirValues) {
  TempDir dir;
  const std::string path = dir.file("long.callgrind");
  write_bytes(path, "events: Ir L1_data_cache_read_misses\nfn=main\n1 500 7\n");
  RunResult r = run_tally({"cat", "--summary", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary_value(r.out, "total L1_data_cache_read_misses"), "7") << r.out;
  EXPECT_EQ(summary_value(r.out, "total Ir"), "500") << r.out;
  // The values of the short and the long name line up.
  size_t ir_value = std::string::npos, misses_value = std::string::npos;
  for (const std::string& line : text_lines(r.out)) {
    if (line.starts_with("total Ir ")) ir_value = line.find("500");
    if (line.starts_with("total L1_data_cache_read_misses ")) misses_value = line.find("7 count");
  }
  EXPECT_NE(ir_value, std::string::npos) << r.out;
  EXPECT_EQ(ir_value, misses_value) << r.out;
}

}  // namespace
}  // namespace tally::test
