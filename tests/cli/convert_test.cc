// `tally convert`: standard input and output, format detection from content (never from
// the name), gzip input, and where DCPI output goes (a file for one image, a directory for
// several, refused on standard output when there are several).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "gperf_decoder.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

std::string fixture(const std::string& name) { return shared("fixtures/gperf/" + name + ".prof"); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Convert, ToGperfOnStandardOutputKeepsEveryStackAndCount) {
  RunResult r = run_tally({"convert", fixture("split-nofp"), "-o", "-", "--to", "gperf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const DecodedGperf in = decode_gperf64le(read_bytes(fixture("split-nofp")));
  const DecodedGperf out = decode_gperf64le(std::vector<uint8_t>(r.out.begin(), r.out.end()));
  EXPECT_EQ(out.period_us, in.period_us);
  EXPECT_EQ(out.total_samples(), in.total_samples());
  // Records may be merged and reordered, but each distinct stack keeps its summed count.
  EXPECT_EQ(merged_stacks(out), merged_stacks(in));
  EXPECT_EQ(out.records.size(), merged_stacks(in).size());
  // The executable mappings survive: the exe's r-xp range is listed.
  bool exe_listed = false;
  for (const MapsRange& m : parse_maps(out.maps_text))
    exe_listed |= m.path.ends_with("/split-nofp") && m.perms.find('x') != std::string::npos;
  EXPECT_TRUE(exe_listed) << out.maps_text;
}

TEST(Convert, ReadsStandardInput) {
  RunResult r = run_tally({"convert", "-", "-o", "-", "--to", "gperf"},
                          read_text(fixture("split")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const DecodedGperf out = decode_gperf64le(std::vector<uint8_t>(r.out.begin(), r.out.end()));
  EXPECT_EQ(out.total_samples(), 276u);  // fixtures/README.md
}

TEST(Convert, DetectsTheFormatFromContentNotTheName) {
  TempDir dir;
  const std::string misnamed = dir.file("x.dcpi");
  write_bytes(misnamed, read_text(fixture("split")));
  RunResult r = run_tally({"cat", "--summary", misnamed});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "gperftools CPU profile")) << r.out;
  EXPECT_TRUE(contains(r.out, "276")) << r.out;
  RunResult converted = run_tally({"convert", misnamed, "-o", "-", "--to", "gperf"});
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  EXPECT_EQ(decode_gperf64le({converted.out.begin(), converted.out.end()}).total_samples(), 276u);
}

TEST(Convert, ReadsGzipCompressedProfiles) {
  const std::string gzip = find_program("gzip");
  TALLY_REQUIRE_PEER(gzip, "gzip");
  RunResult z = run({gzip, "-c", fixture("deep")});
  ASSERT_EQ(z.exit_code, 0);
  ASSERT_EQ(z.out.substr(0, 2), "\x1f\x8b");
  TempDir dir;
  write_bytes(dir.file("deep.prof.gz"), z.out);

  RunResult summary = run_tally({"cat", "--summary", dir.file("deep.prof.gz")});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_TRUE(contains(summary.out, "gzip-compressed")) << summary.out;
  EXPECT_TRUE(contains(summary.out, "230")) << summary.out;  // README: deep.prof, 230 samples

  RunResult from_stdin = run_tally({"convert", "-", "-o", "-", "--to", "gperf"}, z.out);
  ASSERT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  const DecodedGperf in = decode_gperf64le(read_bytes(fixture("deep")));
  EXPECT_EQ(merged_stacks(decode_gperf64le({from_stdin.out.begin(), from_stdin.out.end()})),
            merged_stacks(in));
}

TEST(Convert, DcpiOfOneImageIsOneFile) {
  TempDir dir;
  const std::string out = dir.file("deep.dcpi");
  RunResult r = run_tally({"convert", fixture("deep"), "-o", out, "--to", "dcpi"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::is_regular_file(out));
  EXPECT_TRUE(read_text(out).starts_with("version pdb-0."));
  // The lost call stacks are reported, not silently dropped.
  EXPECT_TRUE(contains(r.err, "warning")) << r.err;
}

TEST(Convert, DcpiOfOneImageMayGoToStandardOutput) {
  RunResult r = run_tally({"convert", fixture("deep"), "-o", "-", "--to", "dcpi"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("version pdb-0.")) << r.out.substr(0, 100);
  EXPECT_TRUE(contains(r.out, "\nsamples")) << r.out.substr(0, 400);
}

TEST(Convert, DcpiOfSeveralImagesIsADirectoryOfFiles) {
  TempDir dir;
  const std::string out = dir.file("shlib");
  RunResult r = run_tally({"convert", fixture("shlib"), "-o", out, "--to", "dcpi"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::is_directory(out));
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    names.push_back(e.path().filename());
    EXPECT_TRUE(read_text(e.path()).starts_with("version pdb-0.")) << e.path();
  }
  ASSERT_EQ(names.size(), 2u);
  std::sort(names.begin(), names.end());
  EXPECT_TRUE(names[0].starts_with("libtallywork.so.")) << names[0];
  EXPECT_TRUE(names[1].starts_with("shlib_main.")) << names[1];
}

TEST(Convert, DcpiOfSeveralImagesToStandardOutputIsRefused) {
  RunResult r = run_tally({"convert", fixture("shlib"), "-o", "-", "--to", "dcpi"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << "nothing may be written: " << r.out.size() << " bytes";
  EXPECT_TRUE(contains(r.err, "2 images")) << r.err;
}

TEST(Convert, DcpiBackToGperfKeepsTheLeafCounts) {
  TempDir dir;
  const std::string dcpi = dir.file("split.dcpi");
  ASSERT_EQ(run_tally({"convert", fixture("split"), "-o", dcpi, "--to", "dcpi"}).exit_code, 0);
  RunResult r = run_tally({"convert", dcpi, "-o", "-", "--to", "gperf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const DecodedGperf back = decode_gperf64le({r.out.begin(), r.out.end()});
  const DecodedGperf in = decode_gperf64le(read_bytes(fixture("split")));
  std::map<uint64_t, uint64_t> leaves_in, leaves_back;
  for (const auto& rec : in.records) leaves_in[rec.pcs[0]] += rec.count;
  for (const auto& rec : back.records) {
    EXPECT_EQ(rec.pcs.size(), 1u);  // DCPI keeps no callers
    leaves_back[rec.pcs[0]] += rec.count;
  }
  EXPECT_EQ(leaves_back, leaves_in);
}

// `-o` naming a FIFO (or a device such as /dev/null) writes into it; replacing it with a
// regular file, as renaming a temporary file over it would, destroys /dev/null when run
// as root.
TEST(Convert, WritesIntoAFifoInsteadOfReplacingIt) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // O_RDWR never blocks on a FIFO and keeps a reader present while tally writes.
  const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  RunResult r = run_tally({"convert", fixture("split"), "-o", fifo, "--to", "gperf"});
  std::string received;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) received.append(buf, size_t(n));
  ::close(fd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  ASSERT_FALSE(received.empty());
  EXPECT_EQ(decode_gperf64le({received.begin(), received.end()}).total_samples(), 276u);
}

}  // namespace
}  // namespace tally::test
