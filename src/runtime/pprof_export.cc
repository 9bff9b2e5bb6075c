// libtally_pprof.so: turns the gperftools profile libtally wrote into gzipped
// profile.proto with tally's own reader and writer (the same conversion as
// `tally convert --to pprof`), for profiles named *.pb.gz.
#include <stdio.h>

#include <exception>
#include <string>

#include "core/diagnostics.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/pprof/pprof.h"
#include "io/input.h"
#include "io/output.h"
#include "runtime/pprof_module.h"

namespace {

int fail(char* error, size_t error_size, const std::string& message) {
  snprintf(error, error_size, "%s", message.c_str());
  return -1;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int tally_pprof_write_from_gperf(
    int gperf_fd, const char* path, char* error, size_t error_size) {
  try {
    auto input = tally::io::Input::open("/proc/self/fd/" + std::to_string(gperf_fd));
    if (!input) return fail(error, error_size, input.error().message);
    tally::core::Diagnostics diagnostics;
    auto profile = tally::gperf::read_profile(input->bytes(), path, diagnostics);
    if (!profile) return fail(error, error_size, profile.error().message);
    auto written =
        tally::io::write_file_atomically(path, tally::pprof::write_profile(std::move(*profile)));
    if (!written) return fail(error, error_size, written.error().message);
    return 0;
  } catch (const std::exception& e) {
    return fail(error, error_size, e.what());
  }
}

static_assert(sizeof(TallyPprofWriter) == sizeof(&tally_pprof_write_from_gperf));
