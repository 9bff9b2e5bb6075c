#include "formats/dcpi/dcpi_file.h"
#include "formats/format.h"
#include "formats/gperf/gperf_file.h"

namespace tally::formats {

Format detect(std::span<const uint8_t> bytes) {
  if (gperf::looks_like_gperf(bytes)) return Format::gperf;
  if (dcpi::looks_like_dcpi(bytes)) return Format::dcpi;
  return Format::unknown;
}

}  // namespace tally::formats
