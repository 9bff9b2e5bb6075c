// Thousands of deterministic random corruptions of every input, in its binary part and in
// its text part: each ends in a clear error or a well-formed profile, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "exercise_readers.h"
#include "fixture_inputs.h"

namespace tally::test {
namespace {

constexpr uint64_t kSeed = 0x7a11'7e57'f11b5ULL;

// Corrupts 1-4 places of `bytes`, alternately in [0, boundary) and [boundary, size), and
// describes what it did so a failure can be replayed by hand.
class Corrupter {
 public:
  explicit Corrupter(uint64_t seed) : rng_(seed) {}

  std::string corrupt(std::vector<uint8_t>& bytes, size_t boundary, bool in_first_part,
                      unsigned word_bytes) {
    std::string how;
    const unsigned edits = 1 + unsigned(next(4));
    for (unsigned e = 0; e < edits; ++e) {
      const bool first = e == 0 ? in_first_part : next(2) == 0;
      const size_t begin = first ? 0 : boundary, end = first ? boundary : bytes.size();
      if (end <= begin) continue;
      const size_t at = begin + next(end - begin);
      switch (next(5)) {
        case 0:  // any byte
          bytes[at] = static_cast<uint8_t>(next(256));
          how += " byte@" + std::to_string(at);
          break;
        case 1:  // one bit
          bytes[at] ^= static_cast<uint8_t>(1u << next(8));
          how += " bit@" + std::to_string(at);
          break;
        case 2: {  // a byte that means something to one of the parsers
          static constexpr uint8_t kInteresting[] = {0, 1, 0xff, 0x7f, 0x80, '\n', ' ', '\t',
                                                     '-', '0', 'f', 'x', '$', ':', '\r'};
          bytes[at] = kInteresting[next(std::size(kInteresting))];
          how += " special@" + std::to_string(at);
          break;
        }
        case 3: {  // a whole aligned word with an extreme value (counts, lengths, periods)
          static constexpr uint64_t kWords[] = {0,          1,          2,
                                                3,          0xffffffff, 0x100000000,
                                                1ULL << 40, 1ULL << 60, 0x7fffffffffffffff,
                                                ~0ULL,      0xfffffffe, 0x80000000};
          const size_t aligned = at / word_bytes * word_bytes;
          if (aligned + word_bytes > bytes.size()) break;
          const uint64_t v = kWords[next(std::size(kWords))];
          std::memcpy(bytes.data() + aligned, &v, word_bytes);  // little-endian host
          how += " word@" + std::to_string(aligned);
          break;
        }
        case 4:  // delete a byte: everything after it shifts
          bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(at));
          how += " delete@" + std::to_string(at);
          break;
      }
    }
    return how;
  }

 private:
  uint64_t next(uint64_t bound) { return rng_() % bound; }
  std::mt19937_64 rng_;
};

void corrupt_many(const std::vector<NamedInput>& inputs, unsigned per_input,
                  unsigned word_bytes, ReadOutcomes& outcomes) {
  Corrupter corrupter(kSeed);
  for (const NamedInput& in : inputs) {
    for (unsigned i = 0; i < per_input; ++i) {
      std::vector<uint8_t> bytes = in.bytes;
      std::string how = corrupter.corrupt(bytes, in.boundary, i % 2 == 0, word_bytes);
      exercise_readers(bytes, in.name + "[#" + std::to_string(i) + how + "]", outcomes);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(ByteFlips, GperfFixturesInBinaryAndTextParts) {
  ReadOutcomes outcomes;
  const OutcomeReport report(outcomes);
  const auto inputs = gperf_inputs();
  corrupt_many(inputs, 1000, 8, outcomes);
  EXPECT_EQ(outcomes.inputs, inputs.size() * 1000);
  // Both kinds of ending happen: the corruptions are neither all harmless nor all fatal.
  EXPECT_GT(outcomes.profiles_read, outcomes.inputs / 10);
  EXPECT_GT(outcomes.errors, outcomes.inputs / 10);
}

TEST(ByteFlips, DcpiFilesInHeaderAndBinaryParts) {
  ReadOutcomes outcomes;
  const OutcomeReport report(outcomes);
  const auto inputs = dcpi_inputs();
  corrupt_many(inputs, 500, 4, outcomes);
  EXPECT_EQ(outcomes.inputs, inputs.size() * 500);
  EXPECT_GT(outcomes.dcpi_files_read, 0u);
  EXPECT_GT(outcomes.errors, outcomes.inputs / 10);
}

}  // namespace
}  // namespace tally::test
