// The folded stacks reader on any bytes, and on success the writer: every sample type
// written must read again with the same total, and writing what was read back gives the
// same text (the writer's output is canonical).
#include <cstdint>
#include <string>

#include "formats/folded/folded.h"
#include "fuzz_check.h"

using namespace tally;

namespace {

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  (void)folded::looks_like_folded(bytes);

  core::Diagnostics diagnostics;
  auto profile = folded::read_profile(bytes, "fuzz", diagnostics);
  if (!profile) {
    FUZZ_CHECK(profile.error().message.starts_with("fuzz: line "), "errors name the line");
    return 0;
  }
  FUZZ_CHECK(profile->sample_types.size() == 1 || profile->sample_types.size() == 2,
             "one count per line, or two in a differential file");
  for (size_t k = 0; k < profile->sample_types.size(); ++k) {
    auto written = folded::write_folded(*profile, k, diagnostics);
    FUZZ_CHECK(written.has_value(), "the writer takes every profile the reader makes");
    auto again = folded::read_profile(as_bytes(*written), "rewritten", diagnostics);
    FUZZ_CHECK(again.has_value(), "tally reads the folded text it wrote");
    // A file whose every leaf frame ends in " <digits>" reads back as differential: the
    // written count is then the last column.
    const size_t column = again->sample_types.size() - 1;
    FUZZ_CHECK(again->total(column) == profile->total(k), "rewriting keeps the total");
    if (again->sample_types.size() == 1) {
      auto rewritten = folded::write_folded(*again, 0, diagnostics);
      FUZZ_CHECK(rewritten.has_value() && *rewritten == *written,
                 "writing what was read back gives the same text");
    }
  }
  return 0;
}
