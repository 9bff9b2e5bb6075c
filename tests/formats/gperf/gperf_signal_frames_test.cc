// The signal-trampoline frame (formats/gperf/signal_frames.h): removed only where the
// evidence says so. Synthetic profiles check the rule without binaries (and the real pprof
// shows where it differs); profiles that name this process's own libc check the binary's
// word, with the trampoline's address taken from a real signal delivered to this process.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "core/diagnostics.h"
#include "formats/gperf/binary_inspector.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/signal_frames.h"
#include "gperf_encoder.h"
#include "pprof_raw.h"
#include "profile_view.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

using Record = GperfRecord;

core::Profile read(const std::string& bytes, const gperf::BinaryInspector* binaries = nullptr) {
  core::Diagnostics diagnostics;
  auto p = gperf::read_profile(as_bytes(bytes), "synthetic", diagnostics, {.binaries = binaries});
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(p).value();
}

// What the records become when `frame` is taken out of those that have it second: the
// rule's effect worked out on the records (callers minus one, equal stacks summed).
std::vector<WeightedStack> without_second_frame(const std::vector<Record>& records,
                                                std::optional<uint64_t> frame) {
  std::map<std::vector<uint64_t>, int64_t> sums;
  for (const Record& r : records) {
    std::vector<uint64_t> pcs = r.pcs;
    if (frame && pcs.size() > 1 && pcs[1] == *frame) pcs.erase(pcs.begin() + 1);
    for (size_t i = 1; i < pcs.size(); ++i) --pcs[i];
    sums[pcs] += static_cast<int64_t>(r.count);
  }
  std::vector<WeightedStack> out;
  for (const auto& [addresses, count] : sums) out.push_back({count, addresses});
  std::sort(out.begin(), out.end());
  return out;
}

// --- The rule without binaries, on synthetic profiles -------------------------------

const char kMaps[] =
    "00010000-00020000 r-xp 00000000 08:01 1 /bin/prog\n"
    "00030000-00040000 r-xp 00000000 08:01 2 /lib/x86_64-linux-gnu/libc.so.6\n"
    "00050000-00060000 r-xp 00000000 08:01 3 /lib/x86_64-linux-gnu/libm.so.6\n";
constexpr uint64_t kInLibc = 0x30101;  // a return address in libc
constexpr uint64_t kInLibm = 0x50101;

struct Shape {
  int records = 64;
  int sharing = 64;                    // records with `frame` second
  bool leaves_in_two_mappings = true;  // prog and libm, else prog only
  uint64_t frame = kInLibc;
};

// Leaves and callers vary, so that no frame but `frame` is shared (pprof, which looks for
// a second one once it removed the first, finds none).
std::vector<Record> shaped(const Shape& s) {
  std::vector<Record> records;
  for (int i = 0; i < s.records; ++i) {
    const uint64_t leaf = (s.leaves_in_two_mappings && i % 2 ? 0x50200 : 0x10200) + (i % 8) * 4;
    const uint64_t caller = 0x10801 + (i % 3) * 0x10;
    std::vector<uint64_t> pcs{leaf, caller, 0x10901};
    if (i < s.sharing) pcs.insert(pcs.begin() + 1, s.frame);
    records.push_back({uint64_t(1 + i % 5), pcs});
  }
  return records;
}

std::vector<WeightedStack> pprof_reading(const std::string& bytes) {
  TempDir dir;
  write_bytes(dir.file("shape.prof"), bytes);
  return run_pprof_raw(find_pprof(), dir.file("shape.prof")).weighted_stacks();
}

TEST(SignalFrameWithoutBinary, RemovedInLibcUnderLeavesOfTwoMappingsAsPprofDoes) {
  const std::vector<Record> records = shaped({});
  const core::Profile p = read(encode_records(records, kMaps));
  EXPECT_EQ(weighted_stacks(p), without_second_frame(records, kInLibc));
  const std::string removed(p.attribute("gperf.signal_frames_removed"));
  EXPECT_NE(removed.find("(64 of 64 records), address 0x30101 (location 0x30100) in "
                         "/lib/x86_64-linux-gnu/libc.so.6"),
            std::string::npos) << removed;
  EXPECT_NE(removed.find("2 mappings (/bin/prog, /lib/x86_64-linux-gnu/libm.so.6)"),
            std::string::npos) << removed;
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  EXPECT_EQ(pprof_reading(encode_records(records, kMaps)), weighted_stacks(p));
}

TEST(SignalFrameWithoutBinary, PprofsMarginOfOneRecordIn32) {
  // 64 records: pprof's margin is 64/32 = 2 records without the frame.
  const std::vector<Record> enough = shaped({.sharing = 62});
  EXPECT_EQ(weighted_stacks(read(encode_records(enough, kMaps))), without_second_frame(enough, kInLibc));
  const std::vector<Record> short_of_it = shaped({.sharing = 61});
  const core::Profile p = read(encode_records(short_of_it, kMaps));
  EXPECT_EQ(weighted_stacks(p), without_second_frame(short_of_it, std::nullopt));
  EXPECT_EQ(p.attribute("gperf.signal_frames_removed"), "");
  EXPECT_EQ(p.attribute("gperf.shared_frame_kept"), "");
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  EXPECT_EQ(pprof_reading(encode_records(enough, kMaps)), without_second_frame(enough, kInLibc));
  EXPECT_EQ(pprof_reading(encode_records(short_of_it, kMaps)), without_second_frame(short_of_it, std::nullopt));
}

// Where tally keeps the frame that pprof removes.
TEST(SignalFrameWithoutBinary, KeptWhenAllLeavesLieInOneMapping) {
  // libc's qsort calling one comparator of the program looks like this.
  const std::vector<Record> records = shaped({.leaves_in_two_mappings = false});
  const core::Profile p = read(encode_records(records, kMaps));
  EXPECT_EQ(weighted_stacks(p), without_second_frame(records, std::nullopt));
  const std::string kept(p.attribute("gperf.shared_frame_kept"));
  EXPECT_NE(kept.find("all lie in one mapping (/bin/prog)"), std::string::npos) << kept;
  EXPECT_EQ(p.attribute("gperf.signal_frames_removed"), "");
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  EXPECT_EQ(pprof_reading(encode_records(records, kMaps)), without_second_frame(records, kInLibc));
}

TEST(SignalFrameWithoutBinary, KeptWhenOutsideTheTrampolinesLibraries) {
  const std::vector<Record> records = shaped({.frame = kInLibm});
  const core::Profile p = read(encode_records(records, kMaps));
  EXPECT_EQ(weighted_stacks(p), without_second_frame(records, std::nullopt));
  const std::string kept(p.attribute("gperf.shared_frame_kept"));
  EXPECT_NE(kept.find("in /lib/x86_64-linux-gnu/libm.so.6: the second frame of 64 of 64 "
                      "records"),
            std::string::npos) << kept;
  EXPECT_NE(kept.find("does not hold the signal trampoline"), std::string::npos) << kept;
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  EXPECT_EQ(pprof_reading(encode_records(records, kMaps)), without_second_frame(records, kInLibm));
}

TEST(SignalFrameWithoutBinary, KeptWhenNoMappingNamesIt) {
  const std::vector<Record> records = shaped({.frame = 0x90101});
  const core::Profile p = read(encode_records(records, kMaps));
  EXPECT_EQ(weighted_stacks(p), without_second_frame(records, std::nullopt));
  EXPECT_NE(p.attribute("gperf.shared_frame_kept").find("names no mapped file"), std::string::npos);
}

TEST(SignalFrameWithoutBinary, DuplicatedLeafUnderTheFrameDroppedAndStacksMerged) {
  // An unwinder that steps through the signal frame reports the interrupted pc again
  // (leaf, trampoline, leaf, caller); one record lacks the frame and the copy already.
  std::vector<Record> records;
  for (int i = 0; i < 40; ++i)
    records.push_back({1, {0x10200 + (i % 2) * 0x40000u, kInLibc, 0x10200 + (i % 2) * 0x40000u,
                           0x10801}});
  records.push_back({5, {0x10200, 0x10801}});
  const core::Profile p = read(encode_records(records, kMaps));
  const std::vector<WeightedStack> expected{{20, {0x50200, 0x10800}}, {25, {0x10200, 0x10800}}};
  EXPECT_EQ(weighted_stacks(p), expected);
  EXPECT_EQ(p.sample_count(), 2u);
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  EXPECT_EQ(pprof_reading(encode_records(records, kMaps)), expected);
}

// Counts are the file's: their sum under the frame saturates instead of overflowing
// (a fuzzer found the overflow; UBSan aborted on it).
TEST(SignalFrameWithoutBinary, CountsNearTheLimitSaturateInTheEvidence) {
  constexpr uint64_t kLargest = uint64_t(std::numeric_limits<int64_t>::max());
  const std::vector<Record> records{{kLargest, {0x10200, kInLibc, 0x10801}},
                                    {kLargest, {0x50200, kInLibc, 0x10811}}};
  const core::Profile p = read(encode_records(records, kMaps));
  const std::string removed(p.attribute("gperf.signal_frames_removed"));
  EXPECT_TRUE(removed.starts_with("9223372036854775807 samples (2 of 2 records)")) << removed;
  EXPECT_EQ(weighted_stacks(p), without_second_frame(records, kInLibc));
}

// The binary's word beats the profile's: here a fake binary.
TEST(SignalFrameWithoutBinary, TheBinarysAnswerDecides) {
  const std::vector<Record> in_libm = shaped({.frame = kInLibm});
  gperf::MappedAddress asked;
  std::string asked_file;  // the question's file lives as long as the question
  const gperf::BinaryInspector says_signal = [&](const gperf::MappedAddress& a) {
    asked = a;
    asked_file = a.file;
    return gperf::BinaryAnswer{gperf::BinaryAnswer::Kind::signal_frame, "fake: sigreturn"};
  };
  const core::Profile removed = read(encode_records(in_libm, kMaps), &says_signal);
  EXPECT_EQ(weighted_stacks(removed), without_second_frame(in_libm, kInLibm));
  EXPECT_EQ(asked_file, "/lib/x86_64-linux-gnu/libm.so.6");
  EXPECT_EQ(asked.address, kInLibm);  // as recorded, not minus one
  EXPECT_EQ(asked.start, 0x50000u);
  EXPECT_EQ(asked.limit, 0x60000u);
  EXPECT_NE(removed.attribute("gperf.signal_frames_removed").find("evidence: the binary: fake: sigreturn"),
            std::string::npos);

  const std::vector<Record> in_libc = shaped({});
  const gperf::BinaryInspector says_other = [](const gperf::MappedAddress&) {
    return gperf::BinaryAnswer{gperf::BinaryAnswer::Kind::other_code, "fake: qsort+0x20"};
  };
  const core::Profile kept = read(encode_records(in_libc, kMaps), &says_other);
  EXPECT_EQ(weighted_stacks(kept), without_second_frame(in_libc, std::nullopt));
  EXPECT_NE(kept.attribute("gperf.shared_frame_kept").find("not a signal frame: fake: qsort+0x20"),
            std::string::npos);

  const gperf::BinaryInspector absent = [](const gperf::MappedAddress&) {
    return gperf::BinaryAnswer{gperf::BinaryAnswer::Kind::not_at_hand, "gone"};
  };
  const core::Profile fallback = read(encode_records(in_libc, kMaps), &absent);
  EXPECT_EQ(weighted_stacks(fallback), without_second_frame(in_libc, kInLibc));
  EXPECT_NE(fallback.attribute("gperf.signal_frames_removed").find("no binary at hand: gone"),
            std::string::npos);
}

TEST(SignalFrameWithoutBinary, LibrariesThatHoldTheTrampoline) {
  for (const char* file : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib/libc-2.15.so", "libc.so",
                           "/lib/libpthread-2.15.so", "/lib/x86_64-linux-gnu/libpthread.so.0",
                           "/lib/ld-musl-x86_64.so.1", "[vdso]", "linux-vdso.so.1"})
    EXPECT_TRUE(gperf::holds_signal_trampoline(file)) << file;
  for (const char* file : {"/lib/libcrypt-2.15.so", "/usr/lib/libc-client.so.2007e",
                           "/usr/lib/x86_64-linux-gnu/libcurl.so.4", "/bin/libc.so.6x/prog",
                           "/lib/libm.so.6", "cppbench_server_main", ""})
    EXPECT_FALSE(gperf::holds_signal_trampoline(file)) << file;
}

// --- With this machine's libc ------------------------------------------------------

void* g_return_address = nullptr;
void note_return_address(int) { g_return_address = __builtin_return_address(0); }

// Where a signal handler returns to: the trampoline (glibc's sigaction installs its
// __restore_rt as the restorer), from a real signal.
uint64_t signal_trampoline() {
  struct sigaction action = {}, old = {};
  action.sa_handler = note_return_address;
  sigemptyset(&action.sa_mask);
  EXPECT_EQ(sigaction(SIGUSR2, &action, &old), 0);
  raise(SIGUSR2);
  sigaction(SIGUSR2, &old, nullptr);
  return reinterpret_cast<uint64_t>(g_return_address);
}

struct MapsLine {
  uint64_t start = 0, limit = 0;
  std::string path;
};

MapsLine mapping_of(const std::string& maps, uint64_t address) {
  std::istringstream in(maps);
  for (std::string line; std::getline(in, line);) {
    unsigned long long start = 0, limit = 0;
    char perms[5] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %4s %*s %*s %*s %n", &start, &limit, perms, &path_at) < 3)
      continue;
    if (address >= start && address < limit)
      return {start, limit, path_at > 0 ? line.substr(size_t(path_at)) : ""};
  }
  return {};
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

class WithThisLibc : public ::testing::Test {
 protected:
  void SetUp() override {
    maps_ = read_text("/proc/self/maps");
    trampoline_ = signal_trampoline();
    libc_ = mapping_of(maps_, trampoline_);
    ASSERT_TRUE(gperf::holds_signal_trampoline(libc_.path))
        << std::hex << "the signal handler returned to 0x" << trampoline_ << " in '"
        << libc_.path << "', not in libc";
    // libc's own functions, not a sanitizer's interceptors of the same name.
    void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(libc, nullptr) << dlerror();
    in_libc_ = reinterpret_cast<uint64_t>(dlsym(libc, "getpid"));
    in_qsort_ = reinterpret_cast<uint64_t>(dlsym(libc, "qsort")) + 4;  // glibc's is 16 bytes
    dlclose(libc);
    ASSERT_EQ(mapping_of(maps_, in_libc_).path, libc_.path);
    ASSERT_EQ(mapping_of(maps_, in_qsort_).path, libc_.path);
    in_test_ = reinterpret_cast<uint64_t>(&signal_trampoline);
    ASSERT_NE(mapping_of(maps_, in_test_).path, libc_.path);
  }

  // Leaves in this test program and in libc, under `second`, then a caller in the program.
  std::vector<Record> records(uint64_t second) const {
    std::vector<Record> out;
    for (uint64_t i = 0; i < 40; ++i)
      out.push_back({1 + i % 3, {(i % 2 ? in_libc_ : in_test_) + i % 4, second, in_test_ + 0x41}});
    return out;
  }

  std::string maps_;
  uint64_t trampoline_ = 0, in_libc_ = 0, in_qsort_ = 0, in_test_ = 0;
  MapsLine libc_;
};

TEST_F(WithThisLibc, TheBinaryShowsTheTrampolinesSignalFrame) {
  const std::vector<Record> recorded = records(trampoline_);
  const gperf::BinaryInspector binaries = gperf::binary_inspector();
  const core::Profile p = read(encode_records(recorded, maps_), &binaries);
  EXPECT_EQ(weighted_stacks(p), without_second_frame(recorded, trampoline_));
  const std::string removed(p.attribute("gperf.signal_frames_removed"));
  EXPECT_NE(removed.find("evidence: the binary: " + libc_.path), std::string::npos) << removed;
  EXPECT_NE(removed.find("its FDE is marked 'S', a signal frame"), std::string::npos) << removed;
}

TEST_F(WithThisLibc, TheBinaryOverrulesTheProfile) {
  // A call site in qsort under leaves of two mappings: the profile alone takes it for the
  // trampoline; libc's CFI says it is ordinary code.
  const std::vector<Record> recorded = records(in_qsort_);
  const std::string bytes = encode_records(recorded, maps_);
  EXPECT_EQ(weighted_stacks(read(bytes)), without_second_frame(recorded, in_qsort_));
  const gperf::BinaryInspector binaries = gperf::binary_inspector();
  const core::Profile p = read(bytes, &binaries);
  EXPECT_EQ(weighted_stacks(p), without_second_frame(recorded, std::nullopt));
  const std::string kept(p.attribute("gperf.shared_frame_kept"));
  EXPECT_NE(kept.find("the binary says it is not a signal frame: " + libc_.path), std::string::npos)
      << kept;
}

TEST_F(WithThisLibc, FoundInABinaryPathDirectoryAsTheSymbolizerFindsIt) {
  // The profile names a libc that is not there; --binary-path names the directory of ours.
  const std::string moved = "/nonexistent-tally-test/libc.so.6";
  const std::string bytes = encode_records(records(trampoline_), replace_all(maps_, libc_.path, moved));
  const std::string dir = libc_.path.substr(0, libc_.path.rfind('/'));
  ASSERT_EQ(libc_.path.substr(dir.size()), "/libc.so.6") << libc_.path;

  const gperf::BinaryInspector in_dir = gperf::binary_inspector({dir});
  const std::string by_binary(read(bytes, &in_dir).attribute("gperf.signal_frames_removed"));
  EXPECT_NE(by_binary.find("evidence: the binary: " + dir + "/libc.so.6"), std::string::npos)
      << by_binary;

  const gperf::BinaryInspector elsewhere = gperf::binary_inspector();
  const std::string by_profile(read(bytes, &elsewhere).attribute("gperf.signal_frames_removed"));
  EXPECT_NE(by_profile.find("no binary at hand: " + moved + " not found"), std::string::npos)
      << by_profile;
}

}  // namespace
}  // namespace tally::test
