// `tally top` against the real google/pprof `pprof -top`: on every pprof fixture, for
// several -nodecount values, -cum, granularities and filters, the same header totals and
// the same rows (name, flat, cum, in order). The ± column is tally's own and not compared.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace tally::test {
namespace {

struct TopTable {
  std::vector<std::string> header;  // the lines before the column titles
  std::vector<TopRow> rows;         // tally's ± column left out
};

TopTable parse_top(const std::string& text) {
  TopTable t;
  for (const std::string& line : text_lines(text)) {
    if (line.find("flat  flat%") != std::string::npos) break;
    t.header.push_back(line);
  }
  t.rows = top_rows(text);
  return t;
}

// What no symbol names, pprof lumps per library ("[lib]"): rows compare in its spelling.
TopTable without_offsets(TopTable t) {
  for (TopRow& row : t.rows) row.name = as_pprof_names(row.name);
  return t;
}

std::vector<std::string> pprof_fixtures() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(shared("fixtures/gperf"))) {
    const std::string file = e.path().filename().string();
    if (file.ends_with(".pb.gz")) names.push_back(file.substr(0, file.size() - 6));
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Runs both with the same options (pprof's spelling, tally's spelling) and compares.
void expect_same_top(const std::string& file, const std::vector<std::string>& pprof_args,
                     const std::vector<std::string>& tally_args) {
  const std::string pprof = find_pprof();
  std::vector<std::string> pprof_argv{pprof, "-top"};
  pprof_argv.insert(pprof_argv.end(), pprof_args.begin(), pprof_args.end());
  pprof_argv.push_back(file);
  RunResult expected = run(pprof_argv);
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  std::vector<std::string> tally_argv{"top"};
  tally_argv.insert(tally_argv.end(), tally_args.begin(), tally_args.end());
  tally_argv.push_back(file);
  RunResult actual = run_tally(tally_argv);
  ASSERT_EQ(actual.exit_code, 0) << actual.err;
  const TopTable want = parse_top(expected.out);
  const TopTable got = without_offsets(parse_top(actual.out));
  ASSERT_FALSE(want.rows.empty()) << expected.out;
  EXPECT_EQ(got.header, want.header) << "pprof:\n" << expected.out << "tally:\n" << actual.out;
  // Where --nodecount cuts a run of ties ("Showing top N nodes"), which of them make the
  // cut depends on their names: the last run compares by its values and size only.
  auto last_run_apart = [](std::vector<TopRow> rows) {
    std::vector<TopRow> run;
    while (!rows.empty() && (run.empty() || (rows.back().flat == run.back().flat &&
                                             rows.back().cum == run.back().cum))) {
      run.push_back(rows.back());
      run.back().name.clear();
      rows.pop_back();
    }
    return std::pair(rows, run);
  };
  const bool cut = expected.out.find("Showing top ") != std::string::npos;
  auto [got_rows, got_run] = cut ? last_run_apart(got.rows) : std::pair(got.rows, std::vector<TopRow>{});
  auto [want_rows, want_run] = cut ? last_run_apart(want.rows) : std::pair(want.rows, std::vector<TopRow>{});
  EXPECT_EQ(got_run, want_run) << "pprof:\n" << expected.out << "tally:\n" << actual.out;
  EXPECT_EQ(ties_by_name(got_rows), ties_by_name(want_rows)) << "pprof:\n" << expected.out << "tally:\n" << actual.out;
}

TEST(TopVsPprof, EveryFixtureEveryNodeCount) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  const auto names = pprof_fixtures();
  ASSERT_GE(names.size(), 5u);
  for (const std::string& name : names) {
    const std::string file = shared("fixtures/gperf/" + name + ".pb.gz");
    for (int n : {5, 10, 1000}) {
      SCOPED_TRACE(name + " nodecount " + std::to_string(n));
      const std::string count = std::to_string(n);
      expect_same_top(file, {"-nodecount=" + count}, {"--nodecount", count});
      expect_same_top(file, {"-nodecount=" + count, "-cum"},
                      {"--nodecount", count, "--sort", "cum"});
    }
  }
}

TEST(TopVsPprof, Granularities) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  for (const char* name : {"split", "shlib", "deep"}) {
    const std::string file = shared(std::string("fixtures/gperf/") + name + ".pb.gz");
    for (const char* g : {"lines", "files", "addresses"}) {
      SCOPED_TRACE(std::string(name) + " " + g);
      expect_same_top(file, {std::string("-") + g}, {"--granularity", g});
      expect_same_top(file, {std::string("-") + g, "-nodecount=4"},
                      {"--granularity", g, "--nodecount", "4"});
      expect_same_top(file, {std::string("-") + g, "-noinlines"},
                      {"--granularity", g, "--no-inlines"});
    }
  }
}

TEST(TopVsPprof, Filters) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  for (const char* name : {"split", "shlib"}) {
    const std::string file = shared(std::string("fixtures/gperf/") + name + ".pb.gz");
    SCOPED_TRACE(name);
    expect_same_top(file, {"-focus=func_a|lib_hot"}, {"--focus", "func_a|lib_hot"});
    expect_same_top(file, {"-ignore=func_[ab]|lib_cold"}, {"--ignore", "func_[ab]|lib_cold"});
    expect_same_top(file, {"-hide=main"}, {"--hide", "main"});
    expect_same_top(file, {"-show=func|lib_"}, {"--show", "func|lib_"});
    expect_same_top(file, {"-focus=run_rounds", "-ignore=func_d", "-lines"},
                    {"--focus", "run_rounds", "--ignore", "func_d", "--granularity", "lines"});
    expect_same_top(file, {"-hide=libtallywork"}, {"--hide", "libtallywork"});  // mapping file
  }
}

TEST(TopVsPprof, SampleIndex) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  const std::string file = shared("fixtures/gperf/split.pb.gz");
  expect_same_top(file, {"-sample_index=samples"}, {"--sample-index", "samples"});
  expect_same_top(file, {"-sample_index=0"}, {"--sample-index", "0"});
}

// gperftools files without their binaries: unsymbolized locations show as their
// mapping, like pprof -symbolize=none.
TEST(TopVsPprof, UnsymbolizedProfiles) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  for (const auto& fixture : gperf_fixtures()) {
    const std::string file = shared("fixtures/gperf/" + fixture.name + ".prof");
    SCOPED_TRACE(fixture.name);
    expect_same_top(file, {"-symbolize=none"}, {"--symbolize=none"});
    expect_same_top(file, {"-symbolize=none", "-addresses", "-nodecount=20"},
                    {"--symbolize=none", "--granularity", "addresses", "--nodecount", "20"});
  }
}

// gperftools files with their binaries (../shared/fixtures/bin): tally symbolizes them
// itself and prints what pprof printed with PPROF_BINARY_PATH=../bin (NAME.pprof-top.txt,
// made on the machine that recorded the profiles; see fixtures/MANIFEST.tsv).
TEST(TopVsPprof, SymbolizedFromTheBinaries) {
  for (const auto& fixture : gperf_fixtures()) {
    SCOPED_TRACE(fixture.name);
    const std::string file = shared("fixtures/gperf/" + fixture.name + ".prof");
    RunResult actual = run_tally({"top", "--nodecount", "1000", "--binary-path", shared("fixtures/bin"), file});
    ASSERT_EQ(actual.exit_code, 0) << actual.err;
    const TopTable want = parse_top(read_text(shared("fixtures/gperf/" + fixture.name + ".pprof-top.txt")));
    const TopTable got = without_offsets(parse_top(actual.out));
    ASSERT_FALSE(want.rows.empty());
    EXPECT_EQ(got.header, want.header) << actual.out;
    EXPECT_EQ(ties_by_name(got.rows), ties_by_name(want.rows)) << actual.out;
  }
}

}  // namespace
}  // namespace tally::test
