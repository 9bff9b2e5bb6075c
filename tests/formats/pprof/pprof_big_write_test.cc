// write_profile on a profile whose message is bigger than one 8 MB gzip block (pprof.h:
// "one gzip member per 8 MB of message"): the output really has several members, zlib
// inflates them all to exactly encode_profile's bytes, tally reads it back, and the real
// google/pprof reads all of it: the same `pprof -raw` as for the message in one member,
// with the sample count and totals the test built.
#include <gtest/gtest.h>

#include <sstream>

#include "core/diagnostics.h"
#include "formats/pprof/pprof.h"
#include "pprof_test_helpers.h"
#include "profile_content.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

constexpr size_t kBlock = size_t(8) << 20;  // io::GzipWriter's block

struct BigProfile {
  core::Profile profile;
  size_t samples = 0;
  int64_t totals[2] = {0, 0};
};

// 600000 distinct 8-frame stacks over 20000 locations: about 18 MB encoded. Stack i starts
// with location i % 20000 + 1 then i / 20000 + 1, so no two stacks are equal.
BigProfile big_profile() {
  constexpr size_t kLocations = 20000, kSamples = 600000;
  BigProfile big;
  core::Profile& p = big.profile;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 10'000'000;
  const core::MappingId binary = p.add_mapping({0x400000, 0x800000, 0, p.intern("/bin/big"),
                                                p.intern("feedface"), true, true, true, false});
  const core::StringId file = p.intern("big.cc");
  for (size_t i = 0; i < kLocations; ++i) {
    core::StringId name = p.intern("fn_" + std::to_string(i));
    core::FunctionId f = p.add_function({name, name, file, static_cast<int64_t>(i)});
    p.add_location({.mapping = binary, .address = 0x400000 + 16 * i, .lines = {{f, static_cast<int64_t>(i % 500 + 1), 0}}});
  }
  uint64_t state = 7;
  std::vector<core::LocationId> stack(8);
  for (size_t i = 0; i < kSamples; ++i) {
    stack[0] = static_cast<core::LocationId>(i % kLocations + 1);
    stack[1] = static_cast<core::LocationId>(i / kLocations + 1);
    for (size_t k = 2; k < stack.size(); ++k) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      stack[k] = static_cast<core::LocationId>((state >> 33) % kLocations + 1);
    }
    const int64_t count = static_cast<int64_t>(i % 7 + 1);
    const int64_t values[2] = {count, count * 10'000'000};
    p.add_sample(stack, values);
    big.totals[0] += values[0];
    big.totals[1] += values[1];
  }
  big.samples = kSamples;
  return big;
}

// `pprof -raw -symbolize=none FILE`, less the lines that name the file.
std::string pprof_raw(const std::string& file) {
  RunResult r = run({find_pprof(), "-raw", "-symbolize=none", file});
  if (r.exit_code != 0) throw std::runtime_error("pprof failed on " + file + ": " + r.err);
  std::istringstream in(r.out);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find(file) == std::string::npos) out += line + "\n";
  return out;
}

TEST(PprofBigWrite, SeveralGzipMembersThatZlibTallyAndPprofReadWhole) {
  BigProfile big = big_profile();
  const std::string encoded = pprof::encode_profile(big.profile);
  ASSERT_GT(encoded.size(), 2 * kBlock) << "the profile must span three blocks";
  const std::string written = pprof::write_profile(big.profile);

  EXPECT_EQ(gzip_member_count(written), (encoded.size() + kBlock - 1) / kBlock);
  EXPECT_EQ(gunzip_bytes(written) == encoded, true) << "the members inflate to the encoding";

  core::Diagnostics diagnostics;
  auto back = pprof::read_profile(bytes_of(written), "big.pb.gz", diagnostics);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->sample_count(), big.samples);
  EXPECT_EQ(back->total(0), big.totals[0]);
  EXPECT_EQ(back->total(1), big.totals[1]);
  big.profile.canonicalize();
  EXPECT_EQ(profile_content(*back) == profile_content(big.profile), true);

  TALLY_REQUIRE_PEER(find_pprof(), "google/pprof");
  TempDir dir;
  write_bytes(dir.file("multi.pb.gz"), written);
  write_bytes(dir.file("single.pb.gz"), gzip_bytes(encoded));
  const std::string raw = pprof_raw(dir.file("multi.pb.gz"));
  EXPECT_EQ(raw == pprof_raw(dir.file("single.pb.gz")), true)
      << "pprof reads the multi-member file as the message in one member";

  // The samples pprof lists: "   count   nanoseconds: location ids".
  std::istringstream in(raw);
  std::string line;
  while (std::getline(in, line) && line != "samples/count cpu/nanoseconds") {
  }
  size_t samples = 0;
  int64_t totals[2] = {0, 0};
  while (std::getline(in, line) && line != "Locations") {
    std::istringstream fields(line);
    int64_t count = 0, nanos = 0;
    fields >> count >> nanos;
    ASSERT_TRUE(fields) << line;
    ++samples;
    totals[0] += count;
    totals[1] += nanos;
  }
  EXPECT_EQ(samples, big.samples);
  EXPECT_EQ(totals[0], big.totals[0]);
  EXPECT_EQ(totals[1], big.totals[1]);
}

}  // namespace
}  // namespace tally::test
