#include "formats/callgrind/callgrind.h"
#include "formats/dcpi/dcpi_file.h"
#include "formats/folded/folded.h"
#include "formats/format.h"
#include "formats/gperf/gperf_file.h"
#include "formats/perfscript/perf_script.h"
#include "formats/pprof/pprof.h"

namespace tally::formats {

// Most specific first: binary headers, then the strict protobuf walk, then text formats.
Format detect(std::span<const uint8_t> bytes) {
  if (gperf::looks_like_gperf(bytes)) return Format::gperf;
  if (dcpi::looks_like_dcpi(bytes)) return Format::dcpi;
  if (pprof::looks_like_pprof(bytes)) return Format::pprof;
  if (callgrind::looks_like_callgrind(bytes)) return Format::callgrind;
  if (perfscript::looks_like_perf_script(bytes)) return Format::perf_script;
  if (folded::looks_like_folded(bytes)) return Format::folded;  // the loosest: last
  return Format::unknown;
}

}  // namespace tally::formats
