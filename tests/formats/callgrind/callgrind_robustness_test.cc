// The reader on damaged input: every real file cut at many offsets and with random bytes
// flipped (seeded, so a failure repeats) reads or fails cleanly, and a failure names the
// line; hostile numbers are rejected with a clear message and never size an allocation
// (under ASan a huge allocation would abort the test).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "callgrind_test_helpers.h"

namespace tally::callgrind::test {
namespace {

std::vector<std::string> every_callgrind_file() {
  std::vector<std::string> files = callgrind_files("conformance/callgrind");
  for (const std::string& path : callgrind_files("fixtures/callgrind"))
    if (std::filesystem::path(path).filename().string().starts_with("callgrind.out.")) files.push_back(path);
  return files;
}

// Reads `bytes`: either a profile whose sample values are all there, or an error that
// names the file and a line. Returns whether it read.
bool read_or_fail_cleanly(std::span<const uint8_t> bytes, const std::string& what) {
  core::Diagnostics d;
  auto p = read_profile(bytes, "damaged.callgrind", d);
  if (!p) {
    const std::string& m = p.error().message;
    EXPECT_TRUE(m.starts_with("damaged.callgrind: line ")) << what << ": " << m;
    return false;
  }
  // What was read is a consistent model: every sample has its values and a position,
  // every edge refers to existing positions.
  for (size_t i = 0; i < p->sample_count(); ++i) {
    EXPECT_EQ(p->stack(i).size(), 1u) << what;
    EXPECT_EQ(p->values(i).size(), p->sample_types.size()) << what;
  }
  for (const core::CallEdge& e : p->call_graph.calls) {
    EXPECT_TRUE(e.caller >= 1 && e.caller <= p->locations.size()) << what;
    EXPECT_TRUE(e.callee >= 1 && e.callee <= p->locations.size()) << what;
    EXPECT_EQ(e.inclusive.size(), p->sample_types.size()) << what;
  }
  // And it can be written again.
  core::Diagnostics wd;
  auto text = write_callgrind(*p, {}, wd);
  EXPECT_TRUE(text) << what << ": " << (text ? "" : text.error().message);
  return true;
}

class DamagedFile : public ::testing::TestWithParam<std::string> {};

TEST_P(DamagedFile, TruncatedAnywhere) {
  const std::vector<uint8_t> bytes = tally::test::read_bytes(GetParam());
  std::vector<size_t> cuts;
  for (size_t k = 0; k < 50; ++k) cuts.push_back(bytes.size() * k / 50);
  // A few cuts at line boundaries: after the first header lines, after a calls= line
  // (the call's cost line missing), after a jump=/jcnd= line.
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (std::string_view key : {"\nevents:", "\ncalls=", "\njump=", "\njcnd=", "\nfn=", "\ntotals:"}) {
    const size_t at = text.find(key);
    if (at == std::string_view::npos) continue;
    const size_t end_of_line = text.find('\n', at + 1);
    cuts.push_back(at + 1);
    if (end_of_line != std::string_view::npos) cuts.push_back(end_of_line + 1);
    cuts.push_back(at + key.size());  // inside the key's value
  }
  // Cut right after the first calls= line: the call's cost line is missing, which is an
  // error naming that line (a cut inside a cost line may still read: "12 3" -> "12").
  const size_t calls = text.find("\ncalls=");
  if (calls != std::string_view::npos) {
    const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + calls + 1, '\n')) + 1;
    const std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(text.find('\n', calls + 1) + 1));
    core::Diagnostics d;
    auto p = read_profile(part, "cut.callgrind", d);
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().message, fmt::format("cut.callgrind: line {}: the file ends after calls= "
                                             "(line {}) without the call's cost line", line, line));
  }
  for (size_t cut : cuts) {
    // A copy of exactly `cut` bytes, so that ASan sees any read past the end.
    const std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    read_or_fail_cleanly(part, "cut at " + std::to_string(cut));
  }
}

TEST_P(DamagedFile, RandomByteFlips) {
  const std::vector<uint8_t> bytes = tally::test::read_bytes(GetParam());
  if (bytes.empty()) return;
  std::mt19937_64 rng(0x7a11 + bytes.size());
  std::uniform_int_distribution<size_t> where(0, bytes.size() - 1);
  const char interesting[] = {'\n', '(', ')', '=', '+', '-', '*', ' ', '0', '9', 'x', '\0', '\xff'};
  size_t failed = 0;
  const int trials = bytes.size() > 200'000 ? 8 : 25;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<uint8_t> damaged = bytes;
    const int flips = 1 + trial % 8;
    for (int k = 0; k < flips; ++k) {
      const size_t at = where(rng);
      if (rng() % 2)
        damaged[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      else
        damaged[at] = static_cast<uint8_t>(interesting[rng() % sizeof(interesting)]);
    }
    if (!read_or_fail_cleanly(damaged, "trial " + std::to_string(trial))) ++failed;
  }
  SUCCEED() << failed << " of " << trials << " damaged copies were rejected";
}

INSTANTIATE_TEST_SUITE_P(Files, DamagedFile, ::testing::ValuesIn(every_callgrind_file()),
                         file_param_name);

// --- hostile values ---

TEST(CallgrindRobustness, VersionTwoAndLaterAreRejected) {
  for (const char* v : {"2", "3", "99999999999999999999999"}) {
    const std::string e = read_error(std::string("version: ") + v + "\nevents: Ir\nfn=f\n1 1\n");
    EXPECT_NE(e.find("line 1"), std::string::npos) << v << ": " << e;
    EXPECT_NE(e.find("version"), std::string::npos) << v << ": " << e;
  }
}

TEST(CallgrindRobustness, NumbersBeyondTheRangeAreRejectedClearly) {
  struct Case {
    const char* text;
    const char* line;
  };
  const Case cases[] = {
      {"events: Ir\nfn=f\n1 99999999999999999999\n", "line 3"},           // cost > 2^64
      {"events: Ir\nfn=f\n99999999999999999999 1\n", "line 3"},           // position
      {"events: Ir\nfn=f\n1 1\ncfn=g\ncalls=99999999999999999999 1\n1 1\n", "line 5"},
      {"events: Ir\nfn=f\n1 1\ncfn=g\ncalls=1 1\n1 99999999999999999999\n", "line 6"},
      {"events: Ir\nfn=f\n5000000000 1\n", "line 3"},                     // line > 2^32
      {"positions: instr\nevents: Ir\nfn=f\n0x1ffffffffffffffff 1\n", "line 4"},
  };
  for (const Case& c : cases) {
    const std::string e = read_error(c.text);
    EXPECT_NE(e.find(c.line), std::string::npos) << c.text << " -> " << e;
  }
  // Sums that overflow saturate or fail, never wrap to a negative total.
  core::Diagnostics d;
  auto p = read_profile(bytes_of("events: Ir\nfn=f\n1 9223372036854775807\n2 9223372036854775807\n"),
                        "big.callgrind", d);
  if (p) {
    EXPECT_GE(p->total(0), 0);
  } else {
    EXPECT_NE(p.error().message.find("line "), std::string::npos) << p.error().message;
  }
}

TEST(CallgrindRobustness, HugeIdsAndCountsAllocateNothingOfTheirSize) {
  // Compressed-name ids, call counts, addresses and line numbers near their limits: a
  // table indexed by them would need gigabytes (ASan's allocator would abort).
  core::Diagnostics d;
  const core::Profile p = read_ok(
      "positions: instr line\nevents: Ir\n"
      "ob=(4294967295) /lib/x.so\nfl=(18446744073709551615) x.c\nfn=(4000000000) f\n"
      "0xffffffffffffff00 4294967295 3\n"
      "cfn=(3999999999) g\ncalls=9223372036854775807 0xfffffffffffffff0 1\n+1 * 2\n"
      "fn=(3999999999)\n0xfffffffffffffff0 1 5\n",
      d);
  EXPECT_EQ(p.total(0), 8);
  EXPECT_EQ(self_cost(p, "f"), 3);
  EXPECT_EQ(self_cost(p, "g"), 5);
  const EdgeSum e = calls_between(p, "f", "g");
  EXPECT_EQ(e.count, 9223372036854775807);
  EXPECT_EQ(e.inclusive, 2);
}

TEST(CallgrindRobustness, ManyEventsAndLongLines) {
  // Events and columns are limited by the text itself: 2000 events, and a cost line with
  // more costs than events, which is an error naming its line.
  std::string events = "events:";
  for (int i = 0; i < 2000; ++i) events += " e" + std::to_string(i);
  core::Diagnostics d;
  const core::Profile p = read_ok(events + "\nfn=f\n1 1 2 3\n", d);
  EXPECT_EQ(p.sample_types.size(), 2000u);
  EXPECT_EQ(p.total(2), 3);
  std::string costs = "events: a b\nfn=f\n1";
  for (int i = 0; i < 10000; ++i) costs += " 1";
  EXPECT_NE(read_error(costs + "\n").find("line 3"), std::string::npos);
  // A name of a megabyte is kept whole.
  const std::string name(1 << 20, 'n');
  EXPECT_EQ(self_cost(read_ok("events: a\nfn=" + name + "\n1 4\n"), name), 4);
}

TEST(CallgrindRobustness, BinaryAndEmptyInputs) {
  EXPECT_NE(read_error(std::string("\0\0\0\0\x01\x02", 6)), "x");  // no crash; either way
  core::Diagnostics d;
  auto empty = read_profile({}, "empty", d);
  if (!empty) {
    EXPECT_NE(empty.error().message.find("empty"), std::string::npos);
  }
  // NUL bytes inside a name or number.
  const std::string with_nul("events: Ir\nfn=a\0b\n1 2\n3\0 4\n", 26);
  const std::string e = read_error(with_nul);
  if (!e.empty()) {
    EXPECT_NE(e.find("line "), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace tally::callgrind::test
