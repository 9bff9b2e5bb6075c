// tally_sprofil_write_dcpi() in libtally hands the work to a companion module,
// libtally_dcpi.so (companion_module.h), which writes with the DCPI format's own structs
// and writer: programs that never write DCPI never load the C++ runtime or fmt.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tally/sprofil.h"

// The module's entry point: the histogram of profp[0..profcnt-1] (tally_sprofil's rules
// and flags) to `path`, counts of `interval_ns` each. Returns 0 or an errno value, with a
// message in `error`.
extern "C" typedef int (*TallySprofilDcpiWriter)(const struct prof* profp, int profcnt,
                                                 unsigned flags, uint64_t interval_ns,
                                                 const char* path, char* error,
                                                 size_t error_size);
#define TALLY_DCPI_WRITER_SYMBOL "tally_dcpi_write_sprofil"
#define TALLY_DCPI_MODULE_NAME "libtally_dcpi.so"
