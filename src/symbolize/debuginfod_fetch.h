// The step between finding the binaries and resolving addresses: the debug files and
// binaries not on this machine, fetched by build id from the debuginfod servers of
// $DEBUGINFOD_URLS, each once, all of them in parallel.
#pragma once

#include <span>

#include "core/diagnostics.h"
#include "symbolize/find_binary.h"

namespace tally::symbolize {

struct DebuginfodOptions {
  bool enabled = true;  // --no-debuginfod: false (no request, not even to the cache)
  // Seconds a request may go with less than 100 KB coming in: 0 takes
  // debuginfod_timeout_seconds() ($DEBUGINFOD_TIMEOUT, else 10 s).
  double timeout_seconds = 0;
  unsigned parallel = 8;  // requests at once, each on a thread with its own client
};

// For each of `binaries` with a build id and no debug file, or no binary: the file from
// the debuginfod servers, from libdebuginfod's cache when it is there; a file that fits
// (its build id, DWARF in a debug file) is filled in. The binary is needed as well as its
// debug file: a debug file's segments have no file offsets (objcopy --only-keep-debug
// zeroes them), so only the binary places a mapping's addresses. Does nothing
// when disabled or $DEBUGINFOD_URLS is unset. Reports in `diagnostics` the build ids
// downloaded, those the servers do not have, and a server that cannot be reached or does
// not answer in time (once: the requests not yet made are then not made). On a terminal,
// a progress line on stderr while it runs.
void fetch_missing_files(std::span<FoundBinary* const> binaries, const DebuginfodOptions& options,
                         core::Diagnostics& diagnostics);

}  // namespace tally::symbolize
