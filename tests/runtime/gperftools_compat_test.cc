// Against gperftools itself: include/tally/profiler.h declares exactly gperftools' API (the
// same struct layouts and function types), and the gperftools program that the API tests
// run on libtally is genuine gperftools code (it runs on libprofiler too).
#include <gtest/gtest.h>

#include "header_shape.h"
#include "runtime_test_support.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

TEST(ProfilerHeader, MatchesGperftoolsHeader) {
  HeaderShape gperftools = gperftools_header_shape();
  std::string found = gperftools.layout.empty() ? "" : "found";
  TALLY_REQUIRE_PEER(found, "gperftools' <gperftools/profiler.h> (libgoogle-perftools-dev)");
  HeaderShape tally = tally_header_shape();
  EXPECT_EQ(tally.layout, gperftools.layout);
  EXPECT_EQ(tally.signatures, gperftools.signatures);
  EXPECT_EQ(tally.layout[7], 1024u);  // profile_name
}

// The same source, built against gperftools' own header and libprofiler: the program is
// genuine gperftools code, and the two libraries agree on what the API reports.
TEST(ProfilerApiGperftools, TheSameProgramRunsOnGperftools) {
  std::string gperftools = PROFILER_API_PROGRAM_GPERFTOOLS;
  TALLY_REQUIRE_PEER(gperftools, "gperftools (libprofiler, <gperftools/profiler.h>)");
  TempDir dir;
  for (std::string mode : {"state", "filter", "threads", "restart"}) {
    RunResult run = test::run({gperftools, mode, dir.file(mode + ".prof")},
                              {.environment = {{"CPUPROFILE_FREQUENCY", "1000"}}, .timeout_seconds = 60});
    EXPECT_EQ(run.exit_code, 0) << mode << ": " << run.describe();
  }
}

}  // namespace
}  // namespace tally::test
