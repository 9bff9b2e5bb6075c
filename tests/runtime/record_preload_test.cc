// The part of `tally record --preload -- CMD` that runs the command with libtally and
// reads back what it and its children wrote (src/cli/record_preload.h).
#include <gtest/gtest.h>

#include <set>

#include "cli/record_preload.h"
#include "formats/format.h"
#include "runtime_test_support.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

using cli::PreloadRecordOptions;

PreloadRecordOptions options_for(std::vector<std::string> command) {
  PreloadRecordOptions options;
  options.command = std::move(command);
  options.frequency = 1000;
  options.library = runtime_library();
  return options;
}

// The profile's functions by cumulative milliseconds, through `tally top`.
TopTable top_of(core::Profile profile, const TempDir& dir) {
  core::Diagnostics diagnostics;
  auto files = formats::write_profile(std::move(profile), formats::Format::pprof, diagnostics);
  EXPECT_TRUE(files.has_value());
  std::string path = dir.file("recorded.pb.gz");
  write_bytes(path, files->front().bytes);
  RunResult top = run_tally({"top", "--nodecount=1000", path});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  return parse_top(top.out);
}

TEST(RecordPreload, MergesTheCommandAndTheProcessesItStarts) {
  core::Diagnostics diagnostics;
  auto result = cli::record_with_preload(options_for({WORKLOAD_PROGRAM, "exec"}), diagnostics);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->status, 0);
  EXPECT_FALSE(result->signaled);
  EXPECT_EQ(result->processes, 3);
  std::set<int64_t> pids;
  const core::Profile& profile = result->profile;
  for (size_t i = 0; i < profile.sample_count(); ++i) {
    for (const core::Label& label : profile.labels(i)) {
      if (profile.str(label.key) == "pid") pids.insert(label.num);
    }
  }
  EXPECT_EQ(pids.size(), 3u);
  TempDir dir;
  TopTable table = top_of(result->profile, dir);
  EXPECT_NEAR(table.cum_ms["parent_work"], 200, 30);
  EXPECT_NEAR(table.cum_ms["child_work"], 600, 60);
  // wait4 counts the children the command waited for.
  EXPECT_NEAR(table.total_ms, cpu_seconds(result->usage) * 1000, 100);
}

TEST(RecordPreload, ReportsTheCommandsExitStatus) {
  core::Diagnostics diagnostics;
  auto result = cli::record_with_preload(options_for({WORKLOAD_PROGRAM, "threads"}), diagnostics);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->status, 0);
  // A bad mode: the workload says so and exits 2, after libtally wrote its profile.
  auto failed = cli::record_with_preload(options_for({WORKLOAD_PROGRAM, "no-such-mode"}), diagnostics);
  ASSERT_TRUE(failed.has_value()) << failed.error().message;
  EXPECT_EQ(failed->status, 2);
}

TEST(RecordPreload, ClearErrors) {
  core::Diagnostics diagnostics;
  auto missing = cli::record_with_preload(options_for({"/nonexistent/program"}), diagnostics);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("cannot run /nonexistent/program"), std::string::npos)
      << missing.error().message;
  PreloadRecordOptions no_library = options_for({WORKLOAD_PROGRAM, "threads"});
  no_library.library.clear();
  setenv("TALLY_RUNTIME_LIBRARY", "/nonexistent/libtally.so", 1);
  auto not_found = cli::record_with_preload(no_library, diagnostics);
  unsetenv("TALLY_RUNTIME_LIBRARY");
  ASSERT_FALSE(not_found.has_value());
  EXPECT_NE(not_found.error().message.find("/nonexistent/libtally.so"), std::string::npos)
      << not_found.error().message;
  // A statically linked program cannot be preloaded: no profile, said so.
  std::string static_program = "/bin/busybox";
  if (access(static_program.c_str(), X_OK) == 0) {
    auto none = cli::record_with_preload(options_for({static_program, "true"}), diagnostics);
    EXPECT_FALSE(none.has_value());
  }
}

}  // namespace
}  // namespace tally::test
