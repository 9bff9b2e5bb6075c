// Every real gperftools fixture, read by tally, must hold exactly what google/pprof reports
// for the same file (`pprof -raw -symbolize=none`), and the numbers in the fixtures'
// README table.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/diagnostics.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/gperf_file.h"
#include "gperf_fixture_list.h"
#include "pprof_raw.h"
#include "profile_view.h"

namespace tally::test {
namespace {

core::Profile read_fixture(const std::string& name) {
  std::vector<uint8_t> bytes = read_bytes(gperf_fixture_path(name));
  core::Diagnostics diagnostics;
  auto profile = gperf::read_profile(bytes, name, diagnostics);
  if (!profile) throw std::runtime_error(profile.error().message);
  if (!diagnostics.empty()) throw std::runtime_error("warning: " + diagnostics.warnings()[0]);
  return std::move(profile).value();
}

class GperfFixtureVsPprof : public ::testing::TestWithParam<std::string> {};

TEST_P(GperfFixtureVsPprof, SameSamplesStacksAndMappingsAsPprofRaw) {
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  const std::string& name = GetParam();
  PprofRaw expected = run_pprof_raw(pprof, gperf_fixture_path(name));
  core::Profile actual = read_fixture(name);

  std::vector<WeightedStack> expected_stacks = expected.weighted_stacks();
  std::vector<WeightedStack> actual_stacks = weighted_stacks(actual);
  EXPECT_EQ(total_count(actual_stacks), total_count(expected_stacks));
  EXPECT_EQ(actual.sample_count(), expected.samples.size());
  EXPECT_EQ(actual_stacks, expected_stacks);

  // Same location -> mapping assignment, compared by the mapping's values.
  std::map<uint64_t, MappingView> expected_mappings = expected.mapping_by_address();
  std::map<uint64_t, MappingView> actual_mappings = mapping_by_address(actual);
  EXPECT_FALSE(expected_mappings.empty());
  for (const auto& [address, mapping] : expected_mappings) {
    auto it = actual_mappings.find(address);
    ASSERT_NE(it, actual_mappings.end()) << std::hex << "no mapping for 0x" << address;
    EXPECT_EQ(it->second, mapping) << std::hex << "location 0x" << address;
  }
  EXPECT_EQ(actual_mappings.size(), expected_mappings.size());
}

TEST_P(GperfFixtureVsPprof, CpuValuesAndPeriodMatchPprof) {
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  const std::string& name = GetParam();
  PprofRaw expected = run_pprof_raw(pprof, gperf_fixture_path(name));
  core::Profile actual = read_fixture(name);

  EXPECT_EQ(actual.period, expected.period);
  EXPECT_EQ(actual.str(actual.period_type.type), "cpu");
  EXPECT_EQ(actual.str(actual.period_type.unit), "nanoseconds");
  ASSERT_EQ(actual.sample_types.size(), 2u);
  EXPECT_EQ(actual.str(actual.sample_types[0].type), "samples");
  EXPECT_EQ(actual.str(actual.sample_types[0].unit), "count");
  EXPECT_EQ(actual.str(actual.sample_types[1].type), "cpu");
  EXPECT_EQ(actual.str(actual.sample_types[1].unit), "nanoseconds");

  std::vector<WeightedStack> expected_cpu;
  for (const PprofRaw::Sample& s : expected.samples) {
    ASSERT_EQ(s.values.size(), 2u);
    WeightedStack w{.count = s.values[1], .addresses = {}};
    for (uint64_t id : s.location_ids) w.addresses.push_back(expected.locations.at(id).address);
    expected_cpu.push_back(std::move(w));
  }
  std::sort(expected_cpu.begin(), expected_cpu.end());
  EXPECT_EQ(weighted_stacks(actual, 1), expected_cpu);
}

// One row of the README's table: | `split.prof` | run | F (Hz) | samples | records | unique
// stacks | max depth |
struct ReadmeRow {
  uint64_t frequency_hz = 0, samples = 0, records = 0, unique_stacks = 0, max_depth = 0;
};

std::map<std::string, ReadmeRow> readme_table() {
  std::map<std::string, ReadmeRow> rows;
  std::istringstream in(read_text(shared("fixtures/README.md")));
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| `") || line.find(".prof` |") == std::string::npos) continue;
    std::vector<std::string> cells;
    std::istringstream cols(line);
    for (std::string cell; std::getline(cols, cell, '|');) cells.push_back(cell);
    if (cells.size() < 8) continue;
    std::string name = cells[1].substr(cells[1].find('`') + 1);
    name = name.substr(0, name.find(".prof`"));
    rows[name] = {std::stoull(cells[3]), std::stoull(cells[4]), std::stoull(cells[5]),
                  std::stoull(cells[6]), std::stoull(cells[7])};
  }
  return rows;
}

TEST_P(GperfFixtureVsPprof, MatchesTheReadmeTable) {
  const std::string& name = GetParam();
  std::map<std::string, ReadmeRow> table = readme_table();
  ASSERT_TRUE(table.count(name)) << name << ".prof has no row in fixtures/README.md";
  const ReadmeRow& row = table.at(name);

  std::vector<uint8_t> bytes = read_bytes(gperf_fixture_path(name));
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(bytes, name, diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->record_count, row.records);
  EXPECT_EQ(file->header.period_us, 1000000 / row.frequency_hz);
  uint64_t max_pcs = 0;
  for (size_t i = 0; i < file->record_slots.size(); i += 2 + file->record_slots[i + 1])
    max_pcs = std::max(max_pcs, file->record_slots[i + 1]);
  EXPECT_EQ(max_pcs, row.max_depth);

  core::Profile profile = read_fixture(name);
  EXPECT_EQ(uint64_t(profile.total(0)), row.samples);
  EXPECT_EQ(profile.sample_count(), row.unique_stacks);
  EXPECT_EQ(profile.attribute("gperf.records"), std::to_string(row.records));
  size_t max_depth = 0;
  for (size_t s = 0; s < profile.sample_count(); ++s)
    max_depth = std::max(max_depth, profile.stack(s).size());
  EXPECT_EQ(max_depth, row.max_depth);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GperfFixtureVsPprof,
                         ::testing::ValuesIn(gperf_fixture_names()),
                         [](const auto& param_info) { return gperf_test_name(param_info.param); });

TEST(GperfFixtures, EveryKnownFixtureIsPresent) {
  std::vector<std::string> names = gperf_fixture_names();
  for (const GperfFixture& f : gperf_fixtures())
    EXPECT_NE(std::find(names.begin(), names.end(), f.name), names.end()) << f.name;
  EXPECT_GE(names.size(), 7u);
}

}  // namespace
}  // namespace tally::test
