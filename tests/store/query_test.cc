// Reading a selection of the database back as one profile: epochs, images, events, call
// stacks or histograms, and images whose files changed or vanished.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "store/database.h"
#include "store/epoch.h"
#include "store/query.h"
#include "store_test_helpers.h"
#include "support/test_support.h"

namespace tally::store {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kEpochs = {"20240101000000", "20240102000000", "20240103120000"};

TEST(SelectEpochs, TheLatestByDefaultAllOrByPrefix) {
  Selection s{.db = "DB"};
  EXPECT_EQ(*select_epochs(kEpochs, s, 0), std::vector<std::string>{"20240103120000"});
  s.epoch = "all";
  EXPECT_EQ(*select_epochs(kEpochs, s, 0), kEpochs);
  s.epoch = "202401";
  EXPECT_EQ(*select_epochs(kEpochs, s, 0), kEpochs);
  s.epoch = "20240102";
  EXPECT_EQ(*select_epochs(kEpochs, s, 0), std::vector<std::string>{"20240102000000"});
}

TEST(SelectEpochs, SinceTakesEveryEpochThatOverlapsTheTimeSince) {
  Selection s{.db = "DB", .since = "2024-01-02T06:00:00"};
  // The epoch of Jan 2 lasts until Jan 3 12:00, so it overlaps.
  EXPECT_EQ(*select_epochs(kEpochs, s, 0),
            (std::vector<std::string>{"20240102000000", "20240103120000"}));
  s.since = "20240103130000";
  EXPECT_EQ(*select_epochs(kEpochs, s, 0), std::vector<std::string>{"20240103120000"});
  s.since = "1h";  // relative to now = Jan 4
  EXPECT_EQ(*select_epochs(kEpochs, s, *epoch_seconds("20240104000000")),
            std::vector<std::string>{"20240103120000"});
}

TEST(SelectEpochs, ARangeRunsFromTheFirstMatchOfEpochThroughTheLastOfEpochTo) {
  Selection s{.db = "DB", .epoch = "20240102000000", .epoch_to = "20240103120000"};
  EXPECT_EQ(*select_epochs(kEpochs, s, 0),
            (std::vector<std::string>{"20240102000000", "20240103120000"}));
  s.epoch = "202401";  // prefixes: the first of January through the last of Jan 2
  s.epoch_to = "20240102";
  EXPECT_EQ(*select_epochs(kEpochs, s, 0),
            (std::vector<std::string>{"20240101000000", "20240102000000"}));
  s.epoch = s.epoch_to = "20240103";
  EXPECT_EQ(*select_epochs(kEpochs, s, 0), std::vector<std::string>{"20240103120000"});
  s.epoch = "20240103";  // reversed
  s.epoch_to = "20240101";
  auto reversed = select_epochs(kEpochs, s, 0);
  ASSERT_FALSE(reversed);
  EXPECT_NE(reversed.error().message.find("reversed"), std::string::npos);
  s.epoch_to = "2023";
  auto none = select_epochs(kEpochs, s, 0);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no epoch matches '2023'"), std::string::npos);
  EXPECT_FALSE(select_epochs(kEpochs, Selection{.db = "DB", .epoch_to = "20240103"}, 0));
  EXPECT_FALSE(select_epochs(kEpochs, Selection{.db = "DB", .since = "1h", .epoch_to = "2024"}, 0));
}

TEST(SelectEpochs, ExplainsWhatDoesNotMatch) {
  Selection s{.db = "DB", .epoch = "2023"};
  auto none = select_epochs(kEpochs, s, 0);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no epoch matches '2023'"), std::string::npos);
  EXPECT_NE(none.error().message.find("20240103120000"), std::string::npos);
  s.since = "1h";
  EXPECT_FALSE(select_epochs(kEpochs, s, 0));  // both
  EXPECT_FALSE(select_epochs({}, Selection{.db = "DB"}, 0));
}

// A database of two epochs. Epoch 1: the exe's 0x1040 x3 (called from 0x1100), the lib's
// 0x2000 x1 (from the exe's 0x1200). Epoch 2: the exe's 0x1050 x2, the lib's 0x2000 x5.
struct TwoEpochs {
  ::tally::test::TempDir dir;
  std::string db = dir.path() + "/db";
  std::string first, second;
  explicit TwoEpochs(bool stacks = true, IndexEntry exe = test::exe_entry()) {
    Database d = *Database::open(db, true);
    first = *d.start_epoch(*epoch_seconds("20240101000000"));
    Aggregate a = test::cpu_clock_aggregate(stacks);
    uint32_t e = a.image(exe, 0, 0x3000), l = a.image(test::lib_entry(), 0, 0x3000);
    const Frame hot[] = {{e, 0x1040}, {e, 0x1100}}, lib[] = {{l, 0x2000}, {e, 0x1200}},
                cold[] = {{e, 0x1050}};
    for (int i = 0; i < 3; ++i) a.add_sample(0, hot, 1000);
    a.add_sample(0, lib, 1000);
    EXPECT_TRUE(d.flush(first, a, {}));
    second = *d.start_epoch(*epoch_seconds("20240102000000"));
    for (int i = 0; i < 2; ++i) a.add_sample(0, cold, 1000);
    for (int i = 0; i < 5; ++i) a.add_sample(0, lib, 1000);
    EXPECT_TRUE(d.flush(second, a, {}));
  }
};

// "image-prefix+offset;..." leaf first -> samples, from the profile's first value.
std::map<std::string, int64_t> stacks_of(const core::Profile& p) {
  std::map<std::string, int64_t> out;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    std::string key;
    for (core::LocationId id : p.stack(s)) {
      const core::Location& l = p.location(id);
      const core::Mapping& m = p.mapping(l.mapping);
      std::string file(p.str(m.file));
      key += (key.empty() ? "" : ";") + file.substr(file.rfind('/') + 1) + "+" +
             std::to_string(l.address - m.start + m.offset);
    }
    out[key] += p.values(s)[0];
  }
  return out;
}

TEST(ReadDbProfile, TheLatestEpochWithItsCallStacks) {
  TwoEpochs t;
  auto r = read_db_profile({.db = t.db});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->epochs, std::vector<std::string>{t.second});
  EXPECT_EQ(r->event, "cpu-clock");
  const core::Profile& p = r->profile;
  ASSERT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[0].type), "samples");
  EXPECT_EQ(p.str(p.sample_types[1].type), "cpu-clock");
  EXPECT_EQ(p.str(p.sample_types[1].unit), "nanoseconds");
  EXPECT_EQ(p.period, 1000);
  EXPECT_EQ(p.total(0), 7);
  EXPECT_EQ(p.total(1), 7000);
  EXPECT_EQ(stacks_of(p), (std::map<std::string, int64_t>{{"server+4176", 2},
                                                          {"libwork.so+8192;server+4608", 5}}));
  // The hottest image is the first mapping; the build id is the real one (none for the exe).
  EXPECT_EQ(p.str(p.mappings[0].file), "/usr/lib/libwork.so");
  EXPECT_EQ(p.str(p.mappings[0].build_id), "1234abcd");
  EXPECT_EQ(p.str(p.mappings[1].build_id), "");
}

TEST(ReadDbProfile, AllEpochsSum) {
  TwoEpochs t;
  auto r = read_db_profile({.db = t.db, .epoch = "all"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->epochs, (std::vector<std::string>{t.first, t.second}));
  EXPECT_EQ(stacks_of(r->profile),
            (std::map<std::string, int64_t>{{"server+4160;server+4352", 3},
                                            {"server+4176", 2},
                                            {"libwork.so+8192;server+4608", 6}}));
}

TEST(ReadDbProfile, WithoutStacksFilesTheHistogramsAreOneFrameStacks) {
  TwoEpochs t(/*stacks=*/false);
  auto r = read_db_profile({.db = t.db, .epoch = "all"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(stacks_of(r->profile),
            (std::map<std::string, int64_t>{{"server+4160", 3}, {"server+4176", 2},
                                            {"libwork.so+8192", 6}}));
}

TEST(ReadDbProfile, ImageRegexSelectsByPathOrId) {
  TwoEpochs t;
  auto r = read_db_profile({.db = t.db, .epoch = "all", .image = "libwork"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->profile.total(0), 6);
  r = read_db_profile({.db = t.db, .epoch = "all", .image = "^" + test::exe_entry().id + "$"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->profile.total(0), 5);
  auto bad = read_db_profile({.db = t.db, .image = "(("});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("not a valid regular expression"), std::string::npos);
}

TEST(ReadDbProfile, ChoosesAnEventAndSaysWhichOthersThereAre) {
  ::tally::test::TempDir dir;
  Database d = *Database::open(dir.path(), true);
  std::string epoch = *d.start_epoch(1709251198);
  Aggregate a({{"page-faults", "count"}, {"cpu-clock", "nanoseconds"}}, true);
  uint32_t e = a.image(test::exe_entry(), 0, 0x3000);
  const Frame f[] = {{e, 0x10}}, g[] = {{e, 0x20}};
  a.add_sample(0, f, 1);
  for (int i = 0; i < 4; ++i) a.add_sample(1, g, 1000);
  ASSERT_TRUE(d.flush(epoch, a, {}));

  auto r = read_db_profile({.db = dir.path()});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->event, "cpu-clock");
  EXPECT_EQ(r->events, (std::vector<std::string>{"cpu-clock", "page-faults"}));
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("--event"), std::string::npos);
  EXPECT_EQ(r->profile.total(0), 4);

  r = read_db_profile({.db = dir.path(), .event = "page-faults"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->profile.total(0), 1);
  EXPECT_EQ(r->profile.str(r->profile.sample_types[1].unit), "count");
  EXPECT_TRUE(r->warnings.empty());

  auto missing = read_db_profile({.db = dir.path(), .event = "cycles"});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cpu-clock, page-faults"), std::string::npos);
}

TEST(ReadDbProfile, AnEmptyOrMissingDatabaseIsAClearError) {
  ::tally::test::TempDir dir;
  auto missing = read_db_profile({.db = dir.file("none")});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no profile database"), std::string::npos);
  auto empty = read_db_profile({.db = dir.path()});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("no epochs"), std::string::npos);
}

TEST(ReadDbProfile, ADamagedFileIsSkippedWithAWarning) {
  TwoEpochs t;
  const std::string file = image_dir(t.db, t.second, "1234abcd") + "/cpu-clock.dcpi";
  std::string bytes = ::tally::test::read_text(file);
  ::tally::test::write_bytes(file, bytes.substr(0, bytes.size() - 2));
  auto r = read_db_profile({.db = t.db});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("skipping " + file), std::string::npos) << r->warnings[0];
  EXPECT_EQ(r->profile.total(0), 2);
}

// An image known by its file's identity (no build id): a real file here.
IndexEntry real_file_entry(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  ImageKey k{.path = path, .build_id = "", .dev_major = 0, .dev_minor = 0, .inode = st.st_ino,
             .size = uint64_t(st.st_size),
             .mtime_ns = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
  return {image_id(k), k};
}

TEST(ReadDbProfile, AChangedFileKeepsItsProfileShownByOffset) {
  ::tally::test::TempDir bin;
  const std::string prog = bin.file("prog");
  ::tally::test::write_bytes(prog, "version one");
  TwoEpochs t(true, real_file_entry(prog));
  auto before = read_db_profile({.db = t.db, .image = "prog"});
  ASSERT_TRUE(before) << before.error().message;
  EXPECT_TRUE(before->warnings.empty());

  // Rebuilt: a new file at the same path (a new inode and size).
  fs::remove(prog);
  ::tally::test::write_bytes(prog, "version two, longer");
  auto after = read_db_profile({.db = t.db, .image = "prog"});
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(after->profile.total(0), 2);
  ASSERT_EQ(after->warnings.size(), 1u);
  EXPECT_NE(after->warnings[0].find("changed since it was profiled"), std::string::npos);
  // Named by offset, not looked up in the new file.
  const core::Profile& p = after->profile;
  const core::Location& leaf = p.location(p.stack(0)[0]);
  ASSERT_EQ(leaf.lines.size(), 1u);
  EXPECT_EQ(p.str(p.function(leaf.lines[0].function).name), "[prog+0x1050]");

  // Vanished: still there, to be reported as missing by the symbolizer.
  fs::remove(prog);
  auto gone = read_db_profile({.db = t.db, .epoch = "all", .image = "prog"});
  ASSERT_TRUE(gone) << gone.error().message;
  EXPECT_EQ(gone->profile.total(0), 5);
  EXPECT_TRUE(gone->warnings.empty());
}

}  // namespace
}  // namespace tally::store
