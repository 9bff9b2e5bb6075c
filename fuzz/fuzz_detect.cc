// Format detection and dispatch on any bytes, the way `tally cat --summary` and
// `tally convert` read a file: gzip is inflated first (with a small output limit, so a
// zip bomb is refused rather than exhausting the fuzzer's memory), then
// formats::read_profile, then every writer on what was read.
#include <cstdint>

#include "formats/format.h"
#include "fuzz_check.h"
#include "io/gzip.h"
#include "io/input.h"

using namespace tally;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (io::is_gzip(bytes)) {
    auto inflated = io::gunzip(bytes, "fuzz.gz", uint64_t(16) << 20);
    if (!inflated) return 0;
    bytes = std::move(*inflated);
  }
  const formats::Format detected_first = formats::detect(bytes);
  core::Diagnostics diagnostics;
  formats::Format detected = formats::Format::unknown;
  auto profile =
      formats::read_profile(io::Input::from_bytes("fuzz", std::move(bytes)), diagnostics, &detected);
  FUZZ_CHECK(detected == detected_first, "detection is deterministic");
  FUZZ_CHECK(detected != formats::Format::unknown || !profile, "unknown formats are refused");
  if (!profile) {
    FUZZ_CHECK(!profile.error().message.empty(), "errors say something");
    return 0;
  }
  for (formats::Format to : {formats::Format::gperf, formats::Format::dcpi}) {
    auto files = formats::write_profile(*profile, to, diagnostics);
    if (!files) continue;
    for (const formats::OutputFile& f : *files) {
      core::Diagnostics again;
      formats::Format back_format = formats::Format::unknown;
      auto back = formats::read_profile(
          io::Input::from_bytes("rewritten", {f.bytes.begin(), f.bytes.end()}), again,
          &back_format);
      FUZZ_CHECK(back.has_value(), "tally reads what it wrote");
      FUZZ_CHECK(back_format == to, "what tally wrote is detected as the format it wrote");
    }
  }
  return 0;
}
