// `tally convert --symbolize`: the functions, lines and inline frames resolved from the
// binaries go into the pprof output, so google/pprof needs no binaries afterwards: pprof
// -top on tally's file must print what pprof printed with the binaries at hand
// (NAME.pprof-top.txt, made with PPROF_BINARY_PATH=../bin; fixtures/MANIFEST.tsv).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "support/test_support.h"

namespace tally::test {
namespace {

TEST(CliSymbolize, PprofNeedsNoBinariesForTallysSymbolizedOutput) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  TempDir dir;
  for (const GperfFixture& f : gperf_fixtures()) {
    SCOPED_TRACE(f.name);
    const std::string out = dir.file(f.name + ".pb.gz");
    RunResult r = run_tally({"convert", shared("fixtures/gperf/" + f.name + ".prof"), "--symbolize",
                             "--binary-path", shared("fixtures/bin"), "--to", "pprof", "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Without binaries: pprof must not look for them (-symbolize=none) and still show names.
    RunResult top = run({pprof, "-top", "-nodecount=1000", "-symbolize=none", out});
    ASSERT_EQ(top.exit_code, 0) << top.err;
    const std::vector<TopRow> want =
        top_rows(read_text(shared("fixtures/gperf/" + f.name + ".pprof-top.txt")));
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(ties_by_name(top_rows(as_pprof_names(top.out))), ties_by_name(want)) << top.out;
  }
}

TEST(CliSymbolize, AMissingBinaryIsNamedOnceWithThePathsSearched) {
  RunResult r = run_tally({"top", shared("fixtures/gperf/split.prof")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The profile names /tmp/tally-fx/bin/split, which is not on this machine.
  size_t mentions = 0;
  for (size_t at = r.err.find("split: not found"); at != std::string::npos;
       at = r.err.find("split: not found", at + 1))
    ++mentions;
  EXPECT_EQ(mentions, 1u) << r.err;
  EXPECT_NE(r.err.find("searched"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("[split+0x"), std::string::npos) << r.out;
}

// -v on a report: one "tally: symbolize:" line per binary, naming where its symbols came
// from (the fixture binaries carry their DWARF); without it, none.
TEST(CliSymbolize, VerboseSaysWhereEachBinarysSymbolsCameFrom) {
  const std::string bin = shared("fixtures/bin");
  RunResult r = run_tally({"top", "-v", "--binary-path", bin, shared("fixtures/gperf/split.prof")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("tally: symbolize: " + bin + "/split (build id "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("): symbols and DWARF from the binary itself; searched " + bin + "/split"),
            std::string::npos) << r.err;
  EXPECT_NE(r.out.find("func_a"), std::string::npos) << r.out;
  RunResult quiet = run_tally({"top", "--binary-path", bin, shared("fixtures/gperf/split.prof")});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("tally: symbolize:"), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.out, r.out);
}

}  // namespace
}  // namespace tally::test
