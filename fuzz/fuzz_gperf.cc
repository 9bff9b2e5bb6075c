// The gperftools reader on any bytes: the streaming RecordScanner, the faithful
// read_gperf (whose write_gperf must give the same bytes back), the streaming conversion
// gperf::read_profile, and on success the writer, whose output must read again.
#include <cstdint>
#include <cstring>

#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/gperf_file.h"
#include "fuzz_check.h"

using namespace tally;

namespace {

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

void scan(std::span<const uint8_t> bytes) {
  try {
    gperf::RecordScanner scanner(bytes);
    gperf::Record r;
    uint64_t samples = 0;
    while (scanner.next(r)) {
      FUZZ_CHECK(!r.pcs.empty(), "a record has at least one PC");
      FUZZ_CHECK(r.offset < bytes.size(), "a record lies inside the input");
      samples += r.count;
    }
    FUZZ_CHECK(scanner.mapped_objects().size() <= bytes.size(), "the text lies inside the input");
    (void)samples;
  } catch (const core::FormatError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  scan(bytes);

  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(bytes, "fuzz", diagnostics);
  auto streamed = gperf::read_profile(bytes, "fuzz", diagnostics);
  FUZZ_CHECK(file || !streamed, "the streaming reader accepts only what read_gperf accepts");
  if (file) {
    const std::string again = gperf::write_gperf(*file);
    FUZZ_CHECK(again.size() == size && (size == 0 || std::memcmp(again.data(), data, size) == 0),
               "read_gperf -> write_gperf gives the same bytes");
    auto converted = gperf::to_profile(*file, "fuzz", diagnostics);
    FUZZ_CHECK(converted.has_value() == streamed.has_value(),
               "to_profile and read_profile agree");
  }
  if (streamed) {
    auto out = gperf::from_profile(*streamed, diagnostics);
    if (out) {
      const std::string written = gperf::write_gperf(*out);
      auto back = gperf::read_profile(as_bytes(written), "rewritten", diagnostics);
      FUZZ_CHECK(back.has_value(), "tally reads the gperf file it wrote");
      FUZZ_CHECK(back->total(0) <= streamed->total(0),
                 "rewriting never invents samples");
    }
  }
  return 0;
}
