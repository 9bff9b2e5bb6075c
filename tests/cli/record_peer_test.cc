// google/pprof reads what `tally record` writes, with the same numbers as `tally top`:
// every row (name, flat, flat%, sum%, cum, cum%) and the header's totals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_support.h"

namespace tally::test {
namespace {

// The "Showing nodes accounting for ..." line of a -top output.
std::string total_line(const std::string& text) {
  for (const std::string& line : text_lines(text))
    if (line.starts_with("Showing nodes")) return line;
  return "";
}

TEST(RecordPeer, PprofShowsTheSameTopAsTally) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  TempDir dir;
  const std::string out = dir.file("shlib.pb.gz");
  RunResult r = run_tally({"record", "-F", "999", "-g", "fp", "-o", out, "--",
                           shared("fixtures/bin/shlib_main"), "-r", "40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string granularity : {"functions", "files"}) {
    RunResult theirs = run({pprof, "-top", "-nodecount=100", "-" + granularity, out});
    ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
    RunResult ours = run_tally({"top", "--nodecount", "100", "--granularity", granularity, out});
    ASSERT_EQ(ours.exit_code, 0) << ours.err;
    const std::vector<TopRow> their_rows = top_rows(theirs.out), our_rows = top_rows(ours.out);
    EXPECT_EQ(total_line(ours.out), total_line(theirs.out));
    EXPECT_EQ(our_rows, their_rows) << "tally:\n" << ours.out << "\npprof:\n" << theirs.out;
    EXPECT_GE(our_rows.size(), 3u);
  }
}

}  // namespace
}  // namespace tally::test
