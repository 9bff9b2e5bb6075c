// `tally convert`: standard input and output, format detection from content (never from
// the name), gzip input, where DCPI output goes (a file for one image, a directory for
// several, refused on standard output when there are several), and symbolization by default
// for the formats that hold function names.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "gperf_decoder.h"
#include "support/stack_traces.h"
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


// --- symbolization: on by default for folded, callgrind and pprof, as pprof -proto ---

std::string fixture_bin() { return shared("fixtures/bin"); }

// Folded text as stack -> count (equal stacks summed).
std::map<std::string, int64_t> folded_stacks(const std::string& text) {
  std::map<std::string, int64_t> stacks;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    if (space == std::string::npos) continue;
    stacks[line.substr(0, space)] += std::stoll(line.substr(space + 1));
  }
  return stacks;
}

TEST(ConvertSymbolize, FoldedNamesTheFunctionsAsPprofDoes) {
  // google/pprof's -traces of the same profiles with the binaries (1 ms a sample).
  const std::map<std::string, int64_t> want =
      folded_ms_from_pprof_traces(read_text(shared("fixtures/gperf/split.pprof-traces.txt")));
  ASSERT_EQ(want.size(), 4u);  // run_rounds > func_a, func_b, func_c, func_d
  // The binaries found with --binary-path, or with PPROF_BINARY_PATH as pprof finds them.
  RunResult flag = run_tally({"convert", fixture("split"), "--binary-path", fixture_bin(), "--to",
                              "folded", "-o", "-"});
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(folded_stacks(flag.out), want) << flag.out;
  for (const char* f : {"func_a 111", "func_b 83", "func_c 53", "func_d 29"})
    EXPECT_TRUE(contains(flag.out, std::string("run_rounds;") + f)) << f;
  EXPECT_FALSE(contains(flag.err, "symbolize")) << flag.err;

  RunResult env = run_tally({"convert", fixture("split-nofp"), "--to", "folded", "-o", "-"},
                            RunOptions{.environment = {{"PPROF_BINARY_PATH", fixture_bin()}}});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(folded_stacks(env.out),
            folded_ms_from_pprof_traces(
                read_text(shared("fixtures/gperf/split-nofp.pprof-traces.txt"))))
      << env.out;
}

TEST(ConvertSymbolize, SymbolizeNoneKeepsTheAddresses) {
  RunResult r = run_tally({"convert", fixture("split"), "--binary-path", fixture_bin(),
                           "--symbolize=none", "--to", "folded", "-o", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::map<std::string, int64_t> stacks = folded_stacks(r.out);
  ASSERT_FALSE(stacks.empty());
  static const std::regex address_frame(R"(\[(split|libc\.so\.6)\+0x[0-9a-f]+\])");
  int64_t total = 0;
  for (const auto& [stack, count] : stacks) {
    std::istringstream frames(stack);
    for (std::string frame; std::getline(frames, frame, ';');)
      EXPECT_TRUE(std::regex_match(frame, address_frame)) << frame << " in " << stack;
    total += count;
  }
  EXPECT_EQ(total, 276);  // fixtures/README.md
  EXPECT_FALSE(contains(r.out, "func_")) << r.out;
}

TEST(ConvertSymbolize, AMissingBinaryStillConvertsWithItsAddressesAndANote) {
  TempDir dir;
  const std::string empty = dir.file("empty");
  std::filesystem::create_directory(empty);
  const RunOptions nowhere{.environment = {{"PPROF_BINARY_PATH", empty}}};
  // The profile names /tmp/tally-fx/bin/split, which is not on this machine.
  RunResult folded = run_tally({"convert", fixture("split"), "--to", "folded", "-o", "-"}, nowhere);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_TRUE(contains(folded.err, "/tmp/tally-fx/bin/split: not found")) << folded.err;
  EXPECT_TRUE(contains(folded.err, "searched")) << folded.err;
  // The program's frames stay addresses: the leaf 0x1674 is func_a's (split.pprof-traces.txt
  // holds 111 ms of func_a, and this stack holds the 111 samples).
  int64_t at_1674 = 0;
  for (const auto& [stack, count] : folded_stacks(folded.out))
    if (stack.ends_with(";[split+0x1674]")) at_1674 += count;
  EXPECT_EQ(at_1674, 111) << folded.out;

  // In pprof's format the addresses are kept as they were, with no made-up function, so
  // that a symbolizer given the binary later names them; the note stays out of the file.
  const std::string out = dir.file("split.pb.gz");
  RunResult pprof = run_tally({"convert", fixture("split"), "--to", "pprof", "-o", out}, nowhere);
  ASSERT_EQ(pprof.exit_code, 0) << pprof.err;
  EXPECT_TRUE(contains(pprof.err, "split: not found")) << pprof.err;
  RunResult later = run_tally({"top", "--binary-path", fixture_bin(), out}, nowhere);
  ASSERT_EQ(later.exit_code, 0) << later.err;
  EXPECT_THAT(later.out, testing::ContainsRegex("111ms 40\\.22% .* func_a\n")) << later.out;
  RunResult cat = run_tally({"cat", out});
  EXPECT_FALSE(contains(cat.out, "not found")) << "the note is not a comment in the file";
}

TEST(ConvertSymbolize, CallgrindAndPprofGetTheNamesToo) {
  const RunOptions with_binaries{.environment = {{"PPROF_BINARY_PATH", fixture_bin()}}};
  // Names written out in full on every fn= line (not "(id)").
  RunResult callgrind = run_tally({"convert", fixture("split"), "--to", "callgrind",
                                   "--no-compress-names", "-o", "-"},
                                  with_binaries);
  ASSERT_EQ(callgrind.exit_code, 0) << callgrind.err;
  for (const char* f : {"func_a", "func_b", "func_c", "func_d", "run_rounds", "main"})
    EXPECT_TRUE(contains(callgrind.out, std::string("\nfn=") + f + "\n")) << f;
  EXPECT_FALSE(contains(callgrind.out, "fn=0x")) << callgrind.out;

  TempDir dir;
  const std::string out = dir.file("split.pb.gz");
  RunResult pprof =
      run_tally({"convert", fixture("split"), "--to", "pprof", "-o", out}, with_binaries);
  ASSERT_EQ(pprof.exit_code, 0) << pprof.err;
  // The names are in the file: top, told not to symbolize, shows them.
  RunResult top = run_tally({"top", "--symbolize=none", out});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, testing::ContainsRegex("83ms 30\\.07% .* func_b\n")) << top.out;
}

TEST(ConvertSymbolize, AddressOnlyFormatsAreWrittenAsRead) {
  // gperf and DCPI hold addresses only: nothing is looked up (no note on a missing binary),
  // and the binaries at hand change nothing.
  const RunOptions with_binaries{.environment = {{"PPROF_BINARY_PATH", fixture_bin()}}};
  for (const char* to : {"gperf", "dcpi"}) {
    RunResult plain = run_tally({"convert", fixture("split"), "--to", to, "-o", "-"});
    RunResult found = run_tally({"convert", fixture("split"), "--to", to, "-o", "-"}, with_binaries);
    RunResult none = run_tally({"convert", fixture("split"), "--symbolize=none", "--to", to, "-o", "-"});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_FALSE(contains(plain.err, "symbolize")) << plain.err;
    EXPECT_EQ(found.out, none.out) << to;
    EXPECT_EQ(plain.out, none.out) << to;
  }
}

}  // namespace
}  // namespace tally::test
