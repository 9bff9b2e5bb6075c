// The BinaryInspector of signal_frames.h that looks at the real binaries: found as the
// symbolizer finds them (--binary-path directories, $PPROF_BINARY_PATH, the mapped path),
// it says whether an address is the signal-return trampoline from the binary's CFI (an FDE
// whose CIE augmentation has 'S', the mark of a signal frame) and its symbols (a function
// named like the trampoline: __restore_rt, __restore, __kernel_rt_sigreturn...).
// A separate library (tally_gperf_binaries): reading the profile itself needs no libdw.
#pragma once

#include <string>
#include <vector>

#include "formats/gperf/signal_frames.h"

namespace tally::gperf {

// `binary_paths`: the --binary-path directories ($PPROF_BINARY_PATH is added).
BinaryInspector binary_inspector(std::vector<std::string> binary_paths = {});

}  // namespace tally::gperf
