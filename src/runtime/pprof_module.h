// pprof output for libtally. libtally itself writes only the gperftools bytes; a profile
// named *.pb.gz is converted at the end by tally's own gperftools reader and pprof writer,
// built into a companion module, libtally_pprof.so (beside libtally.so), that is loaded
// only then: programs that do not ask for pprof never load the C++ runtime, zlib or fmt.
#pragma once

#include <cstddef>

// The module's entry point: reads the complete gperftools profile from `gperf_fd` (from
// offset 0), writes `path` as gzipped profile.proto atomically. 0 on success, else -1
// with a message in `error`.
extern "C" typedef int (*TallyPprofWriter)(int gperf_fd, const char* path, char* error,
                                           size_t error_size);
#define TALLY_PPROF_WRITER_SYMBOL "tally_pprof_write_from_gperf"
#define TALLY_PPROF_MODULE_NAME "libtally_pprof.so"

namespace tally::runtime {

// Loads the module beside this library (or $TALLY_PPROF_MODULE) and converts.
int write_pprof_from_gperf(int gperf_fd, const char* path, char* error, size_t error_size);

}  // namespace tally::runtime
