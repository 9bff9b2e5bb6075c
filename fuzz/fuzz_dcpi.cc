// The DCPI reader on any bytes: read_dcpi, parse_fields, to_profile, and on success the
// writers: write_dcpi of what was read must read back to the same header and chunks, and
// profile -> DCPI images must be writable and readable.
#include <cstdint>

#include "formats/dcpi/dcpi_convert.h"
#include "formats/dcpi/dcpi_file.h"
#include "fuzz_check.h"

using namespace tally;

namespace {

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  (void)dcpi::looks_like_dcpi(bytes);
  core::Diagnostics diagnostics;
  auto file = dcpi::read_dcpi(bytes, "fuzz", diagnostics);
  if (!file) return 0;

  auto fields = dcpi::parse_fields(*file, "fuzz");
  FUZZ_CHECK(fields.has_value(), "read_dcpi accepts only headers that parse_fields accepts");
  auto written = dcpi::write_dcpi(*file);
  if (written) {
    auto again = dcpi::read_dcpi(as_bytes(*written), "rewritten", diagnostics);
    FUZZ_CHECK(again.has_value(), "tally reads the DCPI file it wrote");
    FUZZ_CHECK(again->header == file->header, "header lines survive write_dcpi");
    FUZZ_CHECK(again->chunks == file->chunks, "chunks survive write_dcpi");
  }

  auto profile = dcpi::to_profile(*file, "fuzz", diagnostics);
  if (!profile) return 0;
  auto images = dcpi::from_profile(*profile, diagnostics);
  if (!images) return 0;
  for (const dcpi::Image& image : *images) {
    auto out = dcpi::write_dcpi(image.file);
    if (!out) continue;
    auto back = dcpi::read_dcpi(as_bytes(*out), "image", diagnostics);
    FUZZ_CHECK(back.has_value(), "profile -> DCPI output reads back");
    FUZZ_CHECK(back->total_samples() == image.file.total_samples(), "samples survive");
  }
  return 0;
}
