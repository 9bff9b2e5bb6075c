// Reports on the profile database from the command line: top --db (per image, then per
// function, symbolized from the fixture binaries), diff of two epochs, convert from a
// selection, cat on a database file, and the errors of the --db flags. The database is
// built through src/store with the fixture binaries' real offsets (file offsets equal
// link-time addresses in their text segments: readelf -l), so what is checked is the
// command line and the symbolization, not a recording.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "store/database.h"
#include "store/epoch.h"
#include "support/test_support.h"

namespace tally::store {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::tally::test::run_tally;

// nm of the fixtures: func_a 0x1650, func_b 0x16b0, func_c 0x1710, func_d 0x1770,
// run_rounds 0x17d0 (split); lib_hot 0x1120 (libtallywork.so).
constexpr uint32_t kFuncA = 0x1660, kFuncB = 0x16c0, kFuncC = 0x1720, kFuncD = 0x1780,
                   kRunRounds = 0x1800, kLibHot = 0x1130;

IndexEntry fixture_image(const std::string& name, const std::string& build_id) {
  ImageKey k{.path = ::tally::test::shared("fixtures/bin/" + name), .build_id = build_id};
  return {image_id(k), k};
}

struct FixtureDb {
  ::tally::test::TempDir dir;
  std::string db = dir.path() + "/db";
  std::string first, second;
  IndexEntry split = fixture_image("split", "85115c0d985f0b0603c2adb7d1a83899a0b46b11");
  // Known by its file identity, as an image whose build id was not read.
  IndexEntry lib = fixture_image("libtallywork.so", "");

  void add(Aggregate& a, uint32_t offset, int n, bool in_lib = false) {
    uint32_t s = a.image(split, 0, 0x2000), l = a.image(lib, 0, 0x2000);
    const Frame frames[] = {{in_lib ? l : s, offset}, {s, kRunRounds}};
    for (int i = 0; i < n; ++i) a.add_sample(0, frames, 1'000'000);
  }

  FixtureDb() {
    Database d = *Database::open(db, true);
    Aggregate a({{"cpu-clock", "nanoseconds"}}, true);
    first = *d.start_epoch(*epoch_seconds("20250102030405"));
    add(a, kFuncA, 40);
    add(a, kFuncB, 30);
    add(a, kFuncC, 20);
    add(a, kFuncD, 10);
    add(a, kLibHot, 25, true);
    EXPECT_TRUE(d.flush(first, a, {.platform = "x86_64 Linux"}));
    second = *d.start_epoch(*epoch_seconds("20250102040000"));
    add(a, kFuncA, 10);
    add(a, kFuncD, 90);
    EXPECT_TRUE(d.flush(second, a, {.platform = "x86_64 Linux"}));
  }
};

TEST(DbCli, TopShowsImagesThenFunctionsAcrossImages) {
  FixtureDb f;
  auto r = run_tally({"top", "--db", f.db, "--epoch", f.first});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Per image: 100 of 125 samples in split, 25 in the library.
  EXPECT_THAT(r.out, HasSubstr("Images:\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("100 +80\\.00% +80\\.00% +100ms  .*/fixtures/bin/split\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("25 +20\\.00% +  100% +25ms  .*/libtallywork\\.so\n"));
  // Per function, symbolized from the binaries.
  EXPECT_THAT(r.out, HasSubstr("Functions:\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("40ms 32\\.00% 32\\.00% +40ms 32\\.00% .* func_a\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("25ms 20\\.00% .* lib_hot\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("0 +0% +100% +125ms +100% .* run_rounds\n"));
  EXPECT_THAT(r.out, HasSubstr("epoch(s) " + f.first));
  EXPECT_THAT(r.out, Not(HasSubstr("File:")));
}

TEST(DbCli, TopSelectsEpochsAndImages) {
  FixtureDb f;
  // The latest epoch by default.
  auto latest = run_tally({"top", "--db", f.db});
  ASSERT_EQ(latest.exit_code, 0) << latest.err;
  EXPECT_THAT(latest.out, testing::ContainsRegex("90ms 90\\.00% .* func_d\n"));
  auto all = run_tally({"top", "--db", f.db, "--epoch", "all", "--image", "split$"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, testing::ContainsRegex("100ms 50\\.00% .* func_d\n"));
  EXPECT_THAT(all.out, Not(HasSubstr("lib_hot")));
  auto since = run_tally({"top", "--db", f.db, "--since", "2025-01-02T03:30:00"});
  ASSERT_EQ(since.exit_code, 0) << since.err;
  EXPECT_THAT(since.out, HasSubstr("epoch(s) " + f.first + ".." + f.second));
}

TEST(DbCli, DiffOfTwoEpochsShowsTheChange) {
  FixtureDb f;
  auto r = run_tally({"diff", "--db", f.db, f.first, f.second});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // func_d: 10 of 125 (8%) -> 90 of 100 (90%): +82 pp, significant.
  EXPECT_THAT(r.out, testing::ContainsRegex("\\+82\\.00.*\\* +func_d\n")) << r.out;
}

TEST(DbCli, TracesAndPeekSeeTheCallStacks) {
  FixtureDb f;
  auto r = run_tally({"peek", "run_rounds", "--db", f.db, "--epoch", f.first});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("lib_hot"));
  EXPECT_THAT(r.out, HasSubstr("func_a"));
}

TEST(DbCli, ListAndDisasmShowADatabaseImage) {
  FixtureDb f;
  // lib_hot's samples are at offset 0x1130, inside the 10-byte movabs at 0x112c (objdump
  // -d of libtallywork.so).
  auto disasm = run_tally({"disasm", "lib_hot", "--db", f.db, "--epoch", f.first});
  ASSERT_EQ(disasm.exit_code, 0) << disasm.err;
  EXPECT_THAT(disasm.out, testing::ContainsRegex("25ms +25ms +112c: movabs"));
  auto list = run_tally({"list", "func_a", "--db", f.db, "--epoch", "all"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, testing::ContainsRegex("ROUTINE =+ func_a"));
  EXPECT_THAT(list.out, testing::ContainsRegex("50ms +50ms \\(flat, cum\\)"));
}

TEST(DbCli, ConvertASelectionToPprofAndBack) {
  FixtureDb f;
  const std::string out = f.dir.file("all.pb.gz");
  auto r = run_tally({"convert", "--db", f.db, "--epoch", "all", "--symbolize", "--to",
                      "pprof", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto top = run_tally({"top", out});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, testing::ContainsRegex("100ms 44\\.44% .* func_d\n"));  // 100 of 225
}

TEST(DbCli, CatReadsADatabaseFile) {
  FixtureDb f;
  const std::string file = image_dir(f.db, f.first, f.split.id) + "/cpu-clock.dcpi";
  auto r = run_tally({"cat", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("image"));
  EXPECT_THAT(r.out, HasSubstr(f.split.id));
  EXPECT_THAT(r.out, HasSubstr("epoch"));
  EXPECT_THAT(r.out, HasSubstr(f.first));
  auto stacks = run_tally({"cat", "--summary",
                           image_dir(f.db, f.first, f.lib.id) + "/stacks.pb.gz"});
  ASSERT_EQ(stacks.exit_code, 0) << stacks.err;
  EXPECT_THAT(stacks.out, HasSubstr("25"));
}

TEST(DbCli, FlagErrorsAreUsageErrors) {
  FixtureDb f;
  EXPECT_EQ(run_tally({"top"}).exit_code, 2);
  EXPECT_EQ(run_tally({"top", "x.prof", "--db", f.db}).exit_code, 2);
  auto no_db = run_tally({"top", "x.prof", "--epoch", "all"});
  EXPECT_EQ(no_db.exit_code, 2);
  EXPECT_THAT(no_db.err, HasSubstr("need --db"));
  EXPECT_EQ(run_tally({"diff", "--db", f.db, "--epoch", "all", f.first, f.second}).exit_code, 2);
  auto missing = run_tally({"top", "--db", f.dir.file("none")});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_THAT(missing.err, HasSubstr("no profile database"));
  auto no_epoch = run_tally({"top", "--db", f.db, "--epoch", "1999"});
  EXPECT_EQ(no_epoch.exit_code, 1);
  EXPECT_THAT(no_epoch.err, HasSubstr("no epoch matches '1999'"));
}

}  // namespace
}  // namespace tally::store
