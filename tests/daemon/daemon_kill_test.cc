// kill -9 at any moment of a flush loop leaves every file of the database readable: each
// DCPI file parses and its footer matches its chunks (checked by the tests' own reader),
// each stacks file and the index parse; and no flush the daemon confirmed is lost (the
// database holds at least every sample a `tally flush` reported written). Repeated with
// the kill at random moments while flushes run back to back.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <regex>
#include <thread>

#include "core/diagnostics.h"
#include "daemon_process.h"
#include "dcpi_check.h"
#include "formats/pprof/pprof.h"
#include "store/image_index.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

namespace fs = std::filesystem;

struct DbCheck {
  uint64_t samples = 0;  // over every DCPI file
  size_t files = 0, temporaries = 0;
  std::vector<std::string> problems;
};

DbCheck check_database(const std::string& db) {
  DbCheck c;
  for (const auto& entry : fs::recursive_directory_iterator(db)) {
    if (!entry.is_regular_file()) continue;
    const std::string path = entry.path().string(), name = entry.path().filename().string();
    if (name.front() == '.' && name.find(".tmp.") != std::string::npos) {
      ++c.temporaries;  // a write the kill interrupted: never a file readers look at
      continue;
    }
    if (name.ends_with(".dcpi")) {
      ++c.files;
      auto checked = store::test::check_dcpi(read_text(path));
      if (!checked.error.empty()) c.problems.push_back(path + ": " + checked.error);
      c.samples += checked.total;
    } else if (name == "stacks.pb.gz") {
      ++c.files;
      core::Diagnostics ignored;
      auto p = pprof::read_profile(read_bytes(path), path, ignored);
      if (!p) c.problems.push_back(p.error().message);
    } else if (name == "index.tsv") {
      auto index = store::ImageIndex::parse(read_text(path), path);
      if (!index) c.problems.push_back(index.error().message);
    }
  }
  return c;
}

TEST(DaemonKill, KillNineDuringFlushesNeverLeavesAnUnreadableFile) {
  if (!can_sample_system_wide())
    TALLY_SKIP_OR_FAIL_IN_CI("system-wide sampling is not permitted here (needs root)");
  TempDir dir;
  const std::string db = dir.file("db");
  // Work to sample all along: many images' worth of samples come from the rest of the
  // machine too.
  BackgroundProcess busy({shared("fixtures/bin/split"), "-r", "1000000"});

  std::mt19937 random(12345);
  uint64_t confirmed = 0;  // samples the daemon said it had written
  uint64_t last_total = 0;
  size_t interrupted = 0;
  const int kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    DaemonProcess daemon(db, {"-F", "4999"});
    ASSERT_TRUE(daemon.started()) << daemon.log();
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> flushed{0};
    std::thread flusher([&] {
      const std::regex written("flushed ([0-9]+) samples");
      while (!stop) {
        auto r = run_tally({"flush", "--db", db});
        std::smatch m;
        if (r.exit_code == 0 && std::regex_search(r.out, m, written)) flushed += std::stoull(m[1]);
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + random() % 900));
    EXPECT_EQ(daemon.stop(SIGKILL), 128 + SIGKILL);
    stop = true;
    flusher.join();
    confirmed += flushed;

    DbCheck c = check_database(db);
    for (const std::string& p : c.problems) ADD_FAILURE() << p;
    EXPECT_GT(c.files, 0u);
    EXPECT_GE(c.samples, confirmed) << "a confirmed flush was lost";
    EXPECT_GE(c.samples, last_total) << "samples on disk went down";
    last_total = c.samples;
    interrupted += c.temporaries > 0;
  }
  // How often the kill landed inside a write (temporary files left behind): informative,
  // the assertions above hold either way.
  std::printf("%zu of %d kills interrupted a write; %llu samples on disk\n", interrupted, kRounds,
              static_cast<unsigned long long>(last_total));
  // A new daemon clears the temporaries of the killed ones.
  DaemonProcess last(db, {});
  ASSERT_TRUE(last.started()) << last.log();
  EXPECT_EQ(check_database(db).temporaries, 0u);
}

}  // namespace
}  // namespace tally::test
