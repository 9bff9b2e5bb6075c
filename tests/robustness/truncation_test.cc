// Every prefix of every input (each gperf fixture, each DCPI file made from them) is either
// refused with a message naming it or read into a well-formed profile: a profile cut short
// by a killed process or a full disk must never crash tally.
#include <gtest/gtest.h>

#include <algorithm>

#include "exercise_readers.h"
#include "fixture_inputs.h"
#include "io/gzip.h"

namespace tally::test {
namespace {

void truncate_everywhere(const NamedInput& in, ReadOutcomes& outcomes) {
  for (size_t length = 0; length <= in.bytes.size(); ++length) {
    exercise_readers(std::span(in.bytes).first(length),
                     in.name + "[cut at " + std::to_string(length) + "]", outcomes);
    if (::testing::Test::HasFailure()) return;  // the first failing prefix says enough
  }
}

TEST(Truncation, EveryPrefixOfEveryGperfFixture) {
  ReadOutcomes outcomes;
  const OutcomeReport report(outcomes);
  for (const NamedInput& in : gperf_inputs()) {
    SCOPED_TRACE(in.name);
    truncate_everywhere(in, outcomes);
    if (HasFailure()) return;
  }
  // Cuts inside the text part, and at record boundaries, are readable profiles without
  // mapped objects; cuts inside a record or the header are not.
  EXPECT_GT(outcomes.profiles_read, 0u);
  EXPECT_GT(outcomes.errors, 0u);
}

TEST(Truncation, EveryPrefixOfEveryDcpiFile) {
  ReadOutcomes outcomes;
  const OutcomeReport report(outcomes);
  const auto inputs = dcpi_inputs();
  ASSERT_GE(inputs.size(), 9u);  // 5 one-image fixtures, 2 with two images
  for (const NamedInput& in : inputs) {
    SCOPED_TRACE(in.name);
    truncate_everywhere(in, outcomes);
    if (HasFailure()) return;
  }
  // DCPI has a footer at the end: only the whole file reads.
  EXPECT_EQ(outcomes.dcpi_files_read, inputs.size());
}

// Each prefix of a gzip-compressed fixture either fails to inflate or inflates to a prefix
// of the original, never to something else and never past it.
TEST(Truncation, EveryPrefixOfAGzipCompressedFixture) {
  const NamedInput original = gperf_inputs().front();
  const std::string compressed =
      io::gzip(std::string_view(reinterpret_cast<const char*>(original.bytes.data()),
                                original.bytes.size()));
  const auto* z = reinterpret_cast<const uint8_t*>(compressed.data());
  size_t inflated_whole = 0;
  for (size_t length = 0; length <= compressed.size(); ++length) {
    auto out = io::gunzip(std::span(z, length), "cut.gz");
    if (!out) {
      EXPECT_NE(out.error().message.find("cut.gz"), std::string::npos) << out.error().message;
      continue;
    }
    ASSERT_LE(out->size(), original.bytes.size()) << "cut at " << length;
    ASSERT_TRUE(std::equal(out->begin(), out->end(), original.bytes.begin())) << "cut at " << length;
    inflated_whole += out->size() == original.bytes.size();
  }
  EXPECT_GE(inflated_whole, 1u);  // at least the whole stream
}

}  // namespace
}  // namespace tally::test
