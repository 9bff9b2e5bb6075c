// Headers and records that claim absurd sizes (2^60 PCs, a 2^40-slot header, a chunk of
// 2^32-1 counts) must be refused at once, from the size of the input, without allocating
// what they claim: the largest allocation while reading stays small, and it is quick (under
// a second of CPU time: wall time would count a loaded machine's waits).
#include <gtest/gtest.h>


#include "allocation_tracker.h"
#include "exercise_readers.h"
#include "formats/dcpi/dcpi_file.h"
#include "formats/format.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/gperf_file.h"
#include "io/input.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

constexpr size_t kSmallAllocation = 1 << 20;  // every input here is under 1 KB

std::vector<uint8_t> words(std::initializer_list<uint64_t> slots, unsigned width = 8) {
  std::vector<uint8_t> out;
  for (uint64_t s : slots)
    for (unsigned i = 0; i < width; ++i) out.push_back(static_cast<uint8_t>(s >> (8 * i)));
  return out;
}

std::vector<uint8_t> concat(const std::string& text, const std::vector<uint8_t>& b) {
  std::vector<uint8_t> out(text.begin(), text.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

const std::string kDcpiHeader =
    "version pdb-0.07\nimage 0123456789abcdef\nepoch 2401020304\nplatform x86_64\n"
    "event cycles\nperiod 65536\ntstart 400000\ntsize 4096\ncpuspeed 3000\nsamples\n";

// Reads `bytes` with formats::read_profile and the format's own reader; returns the
// error message of read_profile ("" on success).
std::string read_quickly_and_small(const std::vector<uint8_t>& bytes, const std::string& name) {
  reset_largest_allocation();
  const double start = process_cpu_seconds();
  core::Diagnostics diagnostics;
  auto profile = formats::read_profile(io::Input::from_bytes(name, bytes), diagnostics);
  auto gperf_file = gperf::read_gperf(bytes, name, diagnostics);
  auto gperf_profile = gperf::read_profile(bytes, name, diagnostics);
  auto dcpi_file = dcpi::read_dcpi(bytes, name, diagnostics);
  const double cpu_used = process_cpu_seconds() - start;
  EXPECT_LT(largest_allocation(), kSmallAllocation) << name;
  EXPECT_LT(cpu_used, 1.0) << name;
  // And the full round of readers and writers on it.
  ReadOutcomes outcomes;
  exercise_readers(bytes, name, outcomes);
  return profile ? "" : profile.error().message;
}

TEST(HugeCounts, GperfRecordClaimingTwoToTheSixtyPcs) {
  auto bytes = words({0, 3, 0, 1000, 0, /*count*/ 1, /*num_pcs*/ 1ULL << 60, 0x401000});
  std::string error = read_quickly_and_small(bytes, "pcs.prof");
  EXPECT_NE(error.find("pcs.prof: byte 48"), std::string::npos) << error;  // the num_pcs slot
}

TEST(HugeCounts, GperfRecordClaimingAllOnesPcsIn32BitWords) {
  auto bytes = words({0, 3, 0, 1000, 0, 1, 0xffffffff, 0x401000, 0, 1, 0}, 4);
  std::string error = read_quickly_and_small(bytes, "pcs32.prof");
  EXPECT_NE(error.find("pcs32.prof: byte 24"), std::string::npos) << error;
}

TEST(HugeCounts, GperfHeaderClaimingTwoToTheFortySlots) {
  auto bytes = words({0, 1ULL << 40, 0, 1000, 0, 1, 1, 0x401000, 0, 1, 0});
  std::string error = read_quickly_and_small(bytes, "slots.prof");
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find("slots.prof"), std::string::npos) << error;
}

TEST(HugeCounts, GperfHugeSampleCountAndPeriodAreRefused) {
  auto count = words({0, 3, 0, 1000, 0, 1ULL << 63, 1, 0x401000, 0, 1, 0});
  EXPECT_NE(read_quickly_and_small(count, "count.prof").find("count.prof: byte 40"),
            std::string::npos);
  auto period = words({0, 3, 0, ~0ULL, 0, 1, 1, 0x401000, 0, 1, 0});
  EXPECT_NE(read_quickly_and_small(period, "period.prof").find("period.prof"), std::string::npos);
}

TEST(HugeCounts, DcpiChunkClaimingTwoToTheThirtyTwoMinusOneCounts) {
  auto bytes = concat(kDcpiHeader, words({0, 0xffffffff, 5, 1, 5}, 4));
  std::string error = read_quickly_and_small(bytes, "chunk.dcpi");
  const size_t number_at = kDcpiHeader.size() + 4;
  EXPECT_NE(error.find("chunk.dcpi: byte " + std::to_string(number_at)), std::string::npos)
      << error;
}

TEST(HugeCounts, DcpiManyChunksAtTheTopOfTheAddressSpace) {
  // tstart + tsize at the very end of the address space, chunks at the largest offsets.
  std::string header = kDcpiHeader;
  header.replace(header.find("tstart 400000"), 13, "tstart ffffffff00000000");
  header.replace(header.find("tsize 4096"), 10, "tsize 4294967295");
  auto bytes = concat(header, words({0xfffffffe, 1, 7, 0xffffffff, 1, 7, /*footer*/ 2, 14}, 4));
  EXPECT_EQ(read_quickly_and_small(bytes, "top.dcpi"), "");
}

TEST(HugeCounts, DcpiHugeTextSizeAndPeriodAreHandled) {
  std::string header = kDcpiHeader;
  header.replace(header.find("tsize 4096"), 10, "tsize 18446744073709551615");
  header.replace(header.find("period 65536"), 12, "period 18446744073709551615");
  auto bytes = concat(header, words({0, 1, 3, 1, 3}, 4));
  std::string error = read_quickly_and_small(bytes, "tsize.dcpi");
  if (!error.empty()) {
    EXPECT_NE(error.find("tsize.dcpi"), std::string::npos) << error;
  }
}

// The tracker itself works: otherwise every check above passes vacuously.
TEST(HugeCounts, AllocationTrackerSeesALargeAllocation) {
  reset_largest_allocation();
  auto big = std::make_unique<std::vector<uint8_t>>(kSmallAllocation * 4);
  EXPECT_GE(largest_allocation(), kSmallAllocation * 4);
}

}  // namespace
}  // namespace tally::test
