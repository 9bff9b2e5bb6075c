// Flushing the aggregate into the database: one DCPI file per image and event, stacks
// beside them, the index; merging sums; a failed write keeps what was not written.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "core/diagnostics.h"
#include "dcpi_check.h"
#include "formats/pprof/pprof.h"
#include "store/database.h"
#include "store_test_helpers.h"
#include "support/test_support.h"

namespace tally::store {
namespace {

using test::check_dcpi;
using test::CheckedDcpi;
namespace fs = std::filesystem;

constexpr uint64_t kPeriod = 1'000'000;  // 1 ms of cpu-clock

CheckedDcpi read_checked(const std::string& path) {
  CheckedDcpi c = check_dcpi(::tally::test::read_text(path));
  EXPECT_EQ(c.error, "") << path;
  return c;
}

struct Db {
  ::tally::test::TempDir dir;
  Database db = *Database::open(dir.path() + "/db", true);
  std::string epoch = *db.start_epoch(1709251198);
  std::string file(const IndexEntry& image, const std::string& name = "cpu-clock.dcpi") const {
    return image_dir(db.dir(), epoch, image.id) + "/" + name;
  }
};

// Samples: exe offset 0x1040 x3 (one stack exe<-exe), 0x1050 x1; lib offset 0x2000 x2
// called from the exe.
void add_samples(Aggregate& a) {
  uint32_t exe = a.image(test::exe_entry(), 0, 0x3000);
  uint32_t lib = a.image(test::lib_entry(), 0, 0x4000);
  const Frame s1[] = {{exe, 0x1040}, {exe, 0x1100}};
  const Frame s2[] = {{exe, 0x1050}};
  const Frame s3[] = {{lib, 0x2000}, {exe, 0x1200}, {exe, 0x1100}};
  for (int i = 0; i < 3; ++i) a.add_sample(0, s1, kPeriod);
  a.add_sample(0, s2, kPeriod);
  for (int i = 0; i < 2; ++i) a.add_sample(0, s3, kPeriod);
}

TEST(Flush, WritesOneDcpiFilePerImageAndEventWithTheDatabaseHeader) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate();
  add_samples(a);
  EXPECT_EQ(a.pending_samples(), 6u);
  auto flushed = d.db.flush(d.epoch, a, {.platform = "x86_64 Linux 6.1", .cpuspeed_mhz = 2400,
                                         .cpu_count = 2});
  ASSERT_TRUE(flushed) << flushed.error().message;
  EXPECT_EQ(flushed->samples, 6u);
  EXPECT_EQ(flushed->files, 4u);  // two DCPI files, two stacks files

  CheckedDcpi exe = read_checked(d.file(test::exe_entry()));
  EXPECT_EQ(exe.header["version"], "pdb-0.07");
  EXPECT_EQ(exe.header["image"], test::exe_entry().id);
  EXPECT_EQ(exe.header["path"], "/opt/app/bin/server");
  EXPECT_EQ(exe.header["epoch"], d.epoch);
  EXPECT_EQ(exe.header["epoch"], "20240229235958");
  EXPECT_EQ(exe.header["platform"], "x86_64 Linux 6.1");
  EXPECT_EQ(exe.header["event"], "cpu-clock");
  EXPECT_EQ(exe.header["period"], "1000000");
  EXPECT_EQ(exe.header["tstart"], "0");
  EXPECT_EQ(exe.header["tsize"], std::to_string(0x3000));
  EXPECT_EQ(exe.header["cpuspeed"], "2400");
  EXPECT_EQ(exe.header["cpucount"], "2");
  EXPECT_EQ(exe.header["eventunit"], "nanoseconds");
  EXPECT_EQ(exe.counts, (std::map<uint64_t, uint64_t>{{0x1040, 3}, {0x1050, 1}}));

  CheckedDcpi lib = read_checked(d.file(test::lib_entry()));
  EXPECT_EQ(lib.header["image"], "1234abcd");
  EXPECT_EQ(lib.counts, (std::map<uint64_t, uint64_t>{{0x2000, 2}}));
}

TEST(Flush, MergesIntoWhatIsThereSummingCounts) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate();
  add_samples(a);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  add_samples(a);
  const Frame more[] = {{0, 0x2ff0}};
  a.add_sample(0, more, kPeriod);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  CheckedDcpi exe = read_checked(d.file(test::exe_entry()));
  EXPECT_EQ(exe.counts, (std::map<uint64_t, uint64_t>{{0x1040, 6}, {0x1050, 2}, {0x2ff0, 1}}));
  EXPECT_EQ(exe.total, 9u);
  EXPECT_EQ(read_checked(d.file(test::lib_entry())).total, 4u);
}

TEST(Flush, ThePeriodIsTheMeanOverEverySample) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate(false);
  uint32_t exe = a.image(test::exe_entry(), 0, 0x3000);
  const Frame f[] = {{exe, 0x1000}};
  for (int i = 0; i < 3; ++i) a.add_sample(0, f, 1000);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  a.add_sample(0, f, 5000);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  // (3 * 1000 + 5000) / 4
  EXPECT_EQ(read_checked(d.file(test::exe_entry())).header["period"], "2000");
}

TEST(Flush, TsizeCoversEverySampleAndNeverShrinks) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate(false);
  uint32_t exe = a.image(test::exe_entry(), 0, 0x100);
  const Frame far[] = {{exe, 0x5000}};
  a.add_sample(0, far, 1);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  EXPECT_EQ(read_checked(d.file(test::exe_entry())).header["tsize"], std::to_string(0x5001));
  Aggregate b = test::cpu_clock_aggregate(false);
  exe = b.image(test::exe_entry(), 0, 0x10);
  const Frame near[] = {{exe, 0x8}};
  b.add_sample(0, near, 1);
  ASSERT_TRUE(d.db.flush(d.epoch, b, {}));
  EXPECT_EQ(read_checked(d.file(test::exe_entry())).header["tsize"], std::to_string(0x5001));
}

// Stacks of an image as "offset;offset;..." (leaf first, image id prefix) -> count.
std::map<std::string, int64_t> read_stacks(const std::string& path) {
  auto bytes = ::tally::test::read_bytes(path);
  core::Diagnostics diagnostics;
  auto p = pprof::read_profile(bytes, path, diagnostics);
  EXPECT_TRUE(p) << p.error().message;
  std::map<std::string, int64_t> out;
  if (!p) return out;
  EXPECT_EQ(p->sample_types.size(), 1u);
  EXPECT_EQ(p->str(p->sample_types[0].type), "cpu-clock");
  for (size_t s = 0; s < p->sample_count(); ++s) {
    std::string key;
    for (core::LocationId id : p->stack(s)) {
      const core::Location& l = p->location(id);
      const core::Mapping& m = p->mapping(l.mapping);
      key += (key.empty() ? "" : ";") + std::string(p->str(m.build_id)).substr(0, 4) + "+" +
             std::to_string(l.address - m.start);
    }
    out[key] += p->values(s)[0];
  }
  return out;
}

TEST(Flush, StacksBesideTheHistogramsHoldEveryStackAndMerge) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate();
  add_samples(a);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  add_samples(a);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  const std::string e = test::exe_entry().id.substr(0, 4), l = "1234";
  EXPECT_EQ(read_stacks(d.file(test::exe_entry(), "stacks.pb.gz")),
            (std::map<std::string, int64_t>{{e + "+4160;" + e + "+4352", 6}, {e + "+4176", 2}}));
  EXPECT_EQ(read_stacks(d.file(test::lib_entry(), "stacks.pb.gz")),
            (std::map<std::string, int64_t>{{l + "+8192;" + e + "+4608;" + e + "+4352", 4}}));
}

TEST(Flush, WithoutCallStacksWritesNoStacksFile) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate(false);
  add_samples(a);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  EXPECT_TRUE(fs::exists(d.file(test::exe_entry())));
  EXPECT_FALSE(fs::exists(d.file(test::exe_entry(), "stacks.pb.gz")));
}

TEST(Flush, TheIndexNamesEveryImage) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate();
  add_samples(a);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  auto index = ImageIndex::read(d.db.dir());
  ASSERT_TRUE(index) << index.error().message;
  ASSERT_EQ(index->entries().size(), 2u);
  EXPECT_EQ(index->find(test::exe_entry().id)->key, test::exe_entry().key);
  EXPECT_EQ(index->find("1234abcd")->key.path, "/usr/lib/libwork.so");
  // A reopened database sees it.
  auto reopened = Database::open(d.db.dir(), false);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->index().entries().size(), 2u);
}

TEST(Flush, AFailedWriteKeepsWhatWasNotWrittenForTheNextFlush) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate();
  add_samples(a);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  const std::string before = ::tally::test::read_text(d.file(test::exe_entry()));

  add_samples(a);
  int writes = 0;
  d.db.set_writer([&](const std::string& path, std::string_view) -> core::Status {
    if (++writes > 1)  // the first file goes through, then the disk is full
      return core::Error{path + ": cannot write: No space left on device", core::ErrorKind::io};
    return core::ok();  // pretend: nothing reaches the disk
  });
  auto failed = d.db.flush(d.epoch, a, {});
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("No space left on device"), std::string::npos);
  EXPECT_EQ(::tally::test::read_text(d.file(test::exe_entry())), before);
  // The one "written" part left the aggregate; the rest is still there.
  EXPECT_GT(a.pending_samples(), 0u);
  EXPECT_LT(a.pending_samples(), 6u);

  d.db.set_writer(nullptr);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  // The index is unchanged, so the first write was the executable's histogram (swallowed
  // by the fake writer); everything else is on disk exactly once.
  EXPECT_EQ(read_checked(d.file(test::exe_entry())).total, 4u);
  EXPECT_EQ(read_checked(d.file(test::lib_entry())).total, 4u);
  EXPECT_EQ(read_stacks(d.file(test::exe_entry(), "stacks.pb.gz")).size(), 2u);
}

// A database where the samples of add_samples() were flushed once, without stacks.
struct FlushedOnce : Db {
  Aggregate a = test::cpu_clock_aggregate(false);
  std::string path = file(test::exe_entry());
  FlushedOnce() {
    add_samples(a);
    EXPECT_TRUE(db.flush(epoch, a, {}));
  }
};

TEST(Flush, ADamagedFileIsSetAsideNotMergedOrOverwritten) {
  FlushedOnce d;
  Aggregate& a = d.a;
  const std::string& path = d.path;
  std::string bytes = ::tally::test::read_text(path);
  bytes.resize(bytes.size() - 3);
  ::tally::test::write_bytes(path, bytes);
  add_samples(a);
  auto flushed = d.db.flush(d.epoch, a, {});
  ASSERT_TRUE(flushed) << flushed.error().message;
  ASSERT_EQ(flushed->warnings.size(), 1u);
  EXPECT_NE(flushed->warnings[0].find(".damaged"), std::string::npos) << flushed->warnings[0];
  EXPECT_EQ(::tally::test::read_text(path + ".damaged"), bytes);
  EXPECT_EQ(read_checked(path).total, 4u);  // only the new samples
}

TEST(Flush, KeepsHeaderLinesOfOtherPrograms) {
  FlushedOnce d;
  Aggregate& a = d.a;
  const std::string& path = d.path;
  std::string bytes = ::tally::test::read_text(path);
  bytes.insert(bytes.find("samples"), "annotation checked by hand\n");
  // Keep the binary part aligned, as the spec asks.
  size_t pad = (4 - (bytes.find("samples") + 8) % 4) % 4;
  bytes.insert(bytes.find("samples") + 7, std::string(pad, ' '));
  ASSERT_EQ(check_dcpi(bytes).error, "");
  ::tally::test::write_bytes(path, bytes);
  add_samples(a);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  CheckedDcpi merged = read_checked(path);
  EXPECT_EQ(merged.header["annotation"], "checked by hand");
  EXPECT_EQ(merged.total, 8u);
}

TEST(Flush, ACountBeyond32BitsIsAnErrorNotADamagedFile) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate(false);
  uint32_t exe = a.image(test::exe_entry(), 0, 0x100);
  a.image_data(exe).histograms[0].counts[0x10] = uint64_t(1) << 32;
  a.image_data(exe).histograms[0].samples = uint64_t(1) << 32;
  auto flushed = d.db.flush(d.epoch, a, {});
  ASSERT_FALSE(flushed);
  EXPECT_NE(flushed.error().message.find("32-bit"), std::string::npos) << flushed.error().message;
  EXPECT_FALSE(fs::exists(d.file(test::exe_entry())));
  // The aggregate's own count is past 32 bits: no new epoch could hold it, none is made.
  std::string epoch = d.epoch;
  auto rolled = d.db.flush_rolling_over(epoch, a, {}, 1709251198 + 60);
  ASSERT_FALSE(rolled);
  EXPECT_EQ(rolled.error().kind, core::ErrorKind::unsupported);
  EXPECT_EQ(epoch, d.epoch);
  EXPECT_EQ(d.db.epochs().size(), 1u);
}

// An idle instruction of a many-CPU machine passes 2^32 samples in days: the merge that
// would overflow goes into a new epoch instead, and both epochs' files stay exact.
TEST(Flush, ACountThatWouldPass32BitsStartsANewEpoch) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate(false);
  uint32_t exe = a.image(test::exe_entry(), 0, 0x100);
  const auto add = [&](uint32_t offset, uint64_t n) {
    a.image_data(exe).histograms[0].counts[offset] += n;
    a.image_data(exe).histograms[0].samples += n;
    a.image_data(exe).histograms[0].period_sum += n * kPeriod;
  };
  const uint64_t three_billion = 3'000'000'000;
  add(0x10, three_billion);
  std::string epoch = d.epoch;
  auto first = d.db.flush_rolling_over(epoch, a, {}, 1709251198 + 60);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(epoch, d.epoch) << "3e9 fits in 32 bits";
  EXPECT_TRUE(first->warnings.empty());

  add(0x10, three_billion);
  add(0x20, 5);
  auto second = d.db.flush_rolling_over(epoch, a, {}, 1709251198 + 120);
  ASSERT_TRUE(second) << second.error().message;
  ASSERT_NE(epoch, d.epoch);
  EXPECT_EQ(d.db.epochs(), (std::vector<std::string>{d.epoch, epoch}));
  EXPECT_EQ(second->samples, three_billion + 5);
  ASSERT_EQ(second->warnings.size(), 1u);
  EXPECT_NE(second->warnings[0].find("epoch " + epoch + " begins"), std::string::npos)
      << second->warnings[0];

  CheckedDcpi old_file = read_checked(d.file(test::exe_entry()));
  EXPECT_EQ(old_file.total, three_billion);
  CheckedDcpi new_file =
      read_checked(image_dir(d.db.dir(), epoch, test::exe_entry().id) + "/cpu-clock.dcpi");
  EXPECT_EQ(new_file.total, three_billion + 5);
  EXPECT_EQ(new_file.counts[0x20], 5u);
}

TEST(Database, RemovesTemporariesAKilledWriterLeft) {
  Db d;
  Aggregate a = test::cpu_clock_aggregate();
  add_samples(a);
  ASSERT_TRUE(d.db.flush(d.epoch, a, {}));
  const std::string dir = image_dir(d.db.dir(), d.epoch, test::exe_entry().id);
  ::tally::test::write_bytes(dir + "/.cpu-clock.dcpi.tmp.AbC123", "half");
  ::tally::test::write_bytes(d.db.dir() + "/.index.tsv.tmp.XyZ789", "half");
  EXPECT_EQ(d.db.remove_stale_temporaries(), 2u);
  EXPECT_FALSE(fs::exists(dir + "/.cpu-clock.dcpi.tmp.AbC123"));
  EXPECT_TRUE(fs::exists(dir + "/cpu-clock.dcpi"));
}

TEST(Database, ListsEpochsInOrderAndStartsNewOnesAfterTheLatest) {
  Db d;
  auto second = d.db.start_epoch(1709251198);  // the same second as the first
  ASSERT_TRUE(second);
  EXPECT_EQ(*second, "20240229235959");
  auto third = d.db.start_epoch(1800000000);
  ASSERT_TRUE(third);
  fs::create_directory(d.db.dir() + "/not-an-epoch");
  EXPECT_EQ(d.db.epochs(), (std::vector<std::string>{d.epoch, *second, *third}));
}

TEST(Database, RefusesAMissingDirectoryUnlessCreatingAndAFile) {
  ::tally::test::TempDir dir;
  auto missing = Database::open(dir.file("nope"), false);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no profile database"), std::string::npos);
  ::tally::test::write_bytes(dir.file("file"), "x");
  auto file = Database::open(dir.file("file"), true);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("not a directory"), std::string::npos);
}

TEST(WriterLock, OneWriterPerDatabase) {
  ::tally::test::TempDir dir;
  auto first = WriterLock::acquire(dir.path());
  ASSERT_TRUE(first) << first.error().message;
  auto second = WriterLock::acquire(dir.path());
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("another tally daemon"), std::string::npos);
}

// A real full disk: a 64 KiB tmpfs (needs root, as CI runs; skipped elsewhere, failed
// under CI).
TEST(Flush, OnARealFullDiskFailsClearlyAndSucceedsOnceThereIsRoom) {
  ::tally::test::TempDir dir;
  const std::string mnt = dir.file("small");
  fs::create_directory(mnt);
  if (::mount("tally-test", mnt.c_str(), "tmpfs", 0, "size=64k") != 0)
    TALLY_SKIP_OR_FAIL_IN_CI("cannot mount a tmpfs here (needs root): " << std::strerror(errno));
  struct Unmount {
    std::string at;
    ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
  } unmount{mnt};

  auto db = Database::open(mnt + "/db", true);
  ASSERT_TRUE(db);
  auto epoch = db->start_epoch(1709251198);
  ASSERT_TRUE(epoch);
  Aggregate a = test::cpu_clock_aggregate(false);
  // 40 images of 4 KiB histograms each: more than 64 KiB in all.
  uint64_t total = 0;
  for (int i = 0; i < 40; ++i) {
    uint32_t img = a.image(test::exe_entry("/bin/prog" + std::to_string(i)), 0, 0x10000);
    for (uint32_t off = 0; off < 2048; off += 2) {
      const Frame f[] = {{img, off}};
      a.add_sample(0, f, 1);
      ++total;
    }
  }
  auto failed = db->flush(*epoch, a, {});
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("No space left on device"), std::string::npos)
      << failed.error().message;
  const uint64_t left = a.pending_samples();
  EXPECT_GT(left, 0u);
  // Every file that is there is whole.
  uint64_t on_disk = 0;
  for (const auto& entry : fs::recursive_directory_iterator(mnt + "/db"))
    if (entry.path().extension() == ".dcpi") on_disk += read_checked(entry.path()).total;
  EXPECT_EQ(on_disk + left, total);

  ASSERT_EQ(::mount("tally-test", mnt.c_str(), "tmpfs", MS_REMOUNT, "size=4m"), 0);
  auto flushed = db->flush(*epoch, a, {});
  ASSERT_TRUE(flushed) << flushed.error().message;
  on_disk = 0;
  for (const auto& entry : fs::recursive_directory_iterator(mnt + "/db"))
    if (entry.path().extension() == ".dcpi") on_disk += read_checked(entry.path()).total;
  EXPECT_EQ(on_disk, total);
}

}  // namespace
}  // namespace tally::store
