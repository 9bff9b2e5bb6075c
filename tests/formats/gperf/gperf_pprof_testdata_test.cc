// google/pprof's own legacy CPU profiles (Debian's golang-github-google-pprof-dev, read
// where the package installs them), each with NAME.string: pprof's reading of the file
// (profile.Parse(NAME).String()). tally must read the same samples, stack by stack, except
// where it deliberately keeps a frame that pprof's signal-frame heuristic removes
// (go.crc32.cpu). The real pprof is run on the same files too.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <utility>

#include "core/diagnostics.h"
#include "formats/gperf/binary_inspector.h"
#include "formats/gperf/gperf_convert.h"
#include "pprof_raw.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

const char kTestdata[] = "/usr/share/gocode/src/github.com/google/pprof/profile/testdata";

// "" when the package is not installed.
std::string testdata(const std::string& name) {
  const std::string path = std::string(kTestdata) + "/" + name;
  return std::filesystem::exists(path) ? path : "";
}

#define REQUIRE_TESTDATA(path, name)                                                    \
  const std::string path = testdata(name);                                             \
  TALLY_REQUIRE_PEER(path, "golang-github-google-pprof-dev (pprof's test data: " name ")")

// (samples, cpu) by stack of addresses, leaf first: identical stacks summed, as pprof's
// String() lists one sample per record.
using StackValues = std::map<std::vector<uint64_t>, std::pair<int64_t, int64_t>>;

StackValues by_stack(const PprofRaw& raw) {
  StackValues out;
  for (const PprofRaw::Sample& s : raw.samples) {
    std::vector<uint64_t> addresses;
    for (uint64_t id : s.location_ids) addresses.push_back(raw.locations.at(id).address);
    auto& [count, cpu] = out[addresses];
    count += s.values.at(0);
    cpu += s.values.at(1);
  }
  return out;
}

StackValues by_stack(const core::Profile& p) {
  StackValues out;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    std::vector<uint64_t> addresses;
    for (core::LocationId id : p.stack(s)) addresses.push_back(p.location(id).address);
    auto& [count, cpu] = out[addresses];
    count += p.values(s)[0];
    cpu += p.values(s)[1];
  }
  return out;
}

core::Profile read(const std::string& path, const gperf::BinaryInspector* binaries = nullptr) {
  std::vector<uint8_t> bytes = read_bytes(path);
  core::Diagnostics diagnostics;
  auto p = gperf::read_profile(bytes, path, diagnostics, {.binaries = binaries});
  if (!p) throw std::runtime_error(p.error().message);
  EXPECT_TRUE(diagnostics.empty()) << diagnostics.warnings().front();
  return std::move(p).value();
}

PprofRaw golden(const std::string& path) { return parse_pprof_raw(read_text(path + ".string")); }

TEST(PprofTestdata, CppbenchSignalFrameRemovedAsPprofDoes) {
  REQUIRE_TESTDATA(path, "cppbench.cpu");
  const PprofRaw expected = golden(path);
  // The binaries (/lib/libpthread-2.15.so...) are not on this machine: the profile decides,
  // with or without an inspector that looks for them.
  const gperf::BinaryInspector binaries = gperf::binary_inspector();
  for (const gperf::BinaryInspector* inspector : {&binaries, (const gperf::BinaryInspector*)nullptr}) {
    const core::Profile actual = read(path, inspector);
    EXPECT_EQ(by_stack(actual), by_stack(expected));
    EXPECT_EQ(actual.period, expected.period);
    const std::string removed(actual.attribute("gperf.signal_frames_removed"));
    EXPECT_NE(removed.find("712 samples (52 of 52 records)"), std::string::npos) << removed;
    EXPECT_NE(removed.find("address 0x7f5e5414e5b0"), std::string::npos) << removed;
    EXPECT_NE(removed.find("in /lib/libpthread-2.15.so"), std::string::npos) << removed;
    EXPECT_NE(removed.find("2 mappings (cppbench_server_main, /lib/libc-2.15.so)"),
              std::string::npos) << removed;
    EXPECT_EQ(actual.attribute("gperf.shared_frame_kept"), "");
  }
  // The raw file does hold the frame in every record: it was removed, not never there.
  std::vector<uint8_t> bytes = read_bytes(path);
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(bytes, path, diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  uint64_t with_frame = 0;
  for (size_t i = 0; i < file->record_slots.size(); i += 2 + file->record_slots[i + 1])
    with_frame += file->record_slots[i + 1] > 1 && file->record_slots[i + 3] == 0x7f5e5414e5b0;
  EXPECT_EQ(with_frame, 52u);
}

TEST(PprofTestdata, CppbenchFromTheFaithfulFileReadsTheSame) {
  REQUIRE_TESTDATA(path, "cppbench.cpu");
  std::vector<uint8_t> bytes = read_bytes(path);
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(bytes, path, diagnostics);
  ASSERT_TRUE(file) << file.error().message;
  auto converted = gperf::to_profile(*file, path, diagnostics);
  ASSERT_TRUE(converted) << converted.error().message;
  EXPECT_EQ(by_stack(*converted), by_stack(golden(path)));
  EXPECT_EQ(converted->attribute("gperf.signal_frames_removed"),
            read(path).attribute("gperf.signal_frames_removed"));
}

TEST(PprofTestdata, GobenchNothingRemoved) {
  // The most common second frame is in 187 of 206 records: short of all but 206/32.
  REQUIRE_TESTDATA(path, "gobench.cpu");
  const core::Profile actual = read(path);
  EXPECT_EQ(by_stack(actual), by_stack(golden(path)));
  EXPECT_EQ(actual.attribute("gperf.signal_frames_removed"), "");
  EXPECT_EQ(actual.attribute("gperf.shared_frame_kept"), "");
}

// pprof removes two frames that all 69 records share; tally keeps them. The leaves lie at
// 0x430b93-0x430bb5 and the two frames at 0x430c4b and 0x430cc3, just after them in the
// same code: the loop's callers (crc32's update, called from Write), not a signal
// trampoline, which lives in a C library (a Go program has none here: the profile lists
// no mapped objects at all, so nothing shows a trampoline).
TEST(PprofTestdata, GoCrc32KeepsTheTwoSharedCallers) {
  REQUIRE_TESTDATA(path, "go.crc32.cpu");
  const core::Profile actual = read(path);
  StackValues expected = by_stack(golden(path));
  StackValues without_callers;
  for (const auto& [stack, values] : by_stack(actual)) {
    ASSERT_GE(stack.size(), 3u);
    EXPECT_EQ(stack[1], 0x430c4bu);
    EXPECT_EQ(stack[2], 0x430cc3u);
    EXPECT_GE(stack[0], 0x430b93u);
    EXPECT_LE(stack[0], 0x430bb5u);
    std::vector<uint64_t> rest{stack[0]};
    rest.insert(rest.end(), stack.begin() + 3, stack.end());
    auto& [count, cpu] = without_callers[rest];
    count += values.first;
    cpu += values.second;
  }
  EXPECT_EQ(without_callers, expected);
  const std::string kept(actual.attribute("gperf.shared_frame_kept"));
  EXPECT_NE(kept.find("address 0x430c4c"), std::string::npos) << kept;
  EXPECT_NE(kept.find("69 of 69 records (211 samples)"), std::string::npos) << kept;
  EXPECT_NE(kept.find("names no mapped file"), std::string::npos) << kept;
  EXPECT_EQ(actual.attribute("gperf.signal_frames_removed"), "");
}

// The goldens are what the installed pprof still does.
TEST(PprofTestdata, RealPprofAgreesWithTheGoldens) {
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  REQUIRE_TESTDATA(cppbench, "cppbench.cpu");
  for (const char* name : {"cppbench.cpu", "gobench.cpu", "go.crc32.cpu"}) {
    const std::string file = std::string(kTestdata) + "/" + name;
    EXPECT_EQ(by_stack(run_pprof_raw(pprof, file)), by_stack(golden(file))) << name;
  }
}

TEST(PprofTestdata, CatSummaryReportsTheRemovedAndTheKeptFrame) {
  REQUIRE_TESTDATA(cppbench, "cppbench.cpu");
  RunResult r = run_tally({"cat", "--summary", cppbench});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("gperf.signal_frames_removed 712 samples (52 of 52 records), address "
                       "0x7f5e5414e5b0 (location 0x7f5e5414e5af) in /lib/libpthread-2.15.so; "
                       "evidence: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("no binary at hand: /lib/libpthread-2.15.so not found"), std::string::npos)
      << r.out;
  const std::string stacks = "distinct stacks " + std::to_string(by_stack(golden(cppbench)).size());
  EXPECT_NE(r.out.find(stacks + "\n"), std::string::npos) << r.out;

  REQUIRE_TESTDATA(crc32, "go.crc32.cpu");
  r = run_tally({"cat", "--summary", crc32});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("gperf.shared_frame_kept address 0x430c4c"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tally::test
