// The `disasm` report (pprof -disasm REGEX): the instructions of every function whose
// symbol matches REGEX and that has samples, each with its flat and cum and, when it
// changes, the function and source line it comes from, in pprof's layout. The functions
// and their address ranges come from the binaries' symbol tables (symbolize/
// function_range.h), the instructions from capstone, the lines from DWARF (libdw); no
// objdump. As in pprof, samples are taken at address granularity without inline frames
// and those inside an instruction count for it; a symbol matches by its name as the
// binary spells it, else demangled, else without parameters and template arguments; a
// REGEX that reads as a number also selects the function holding that address.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/disassembler.h"
#include "analyze/name_filter.h"
#include "core/error.h"
#include "core/profile.h"
#include "symbolize/debuginfod_fetch.h"

namespace tally::analyze {

struct DisasmOptions {
  std::string regex;
  NameFilters filters;
  std::string sample_index;
  AsmSyntax syntax = AsmSyntax::att;
  std::vector<std::string> binary_paths;  // --binary-path (then $PPROF_BINARY_PATH)
  // Binaries and debug files not found here come from the servers of $DEBUGINFOD_URLS.
  symbolize::DebuginfodOptions debuginfod;
};

struct DisasmInstruction {
  uint64_t address = 0;  // link-time, as in the binary
  std::string text;
  std::string function;  // the function the line belongs to (outermost, demangled)
  std::string file;      // base name of the innermost source file ("" when unknown)
  int64_t line = 0;
  int64_t flat = 0;
  int64_t cum = 0;
};

struct DisasmRoutine {
  std::string name;              // the symbol name that matched
  std::vector<std::string> aka;  // the other names at its address (selected by address)
  std::string binary;            // the file disassembled
  uint64_t start = 0, end = 0;   // link-time range
  int64_t flat = 0;
  int64_t cum = 0;
  std::vector<DisasmInstruction> instructions;
};

struct DisasmReport {
  std::string sample_unit;
  int64_t total = 0;
  std::vector<DisasmRoutine> routines;  // by name, then address
  std::vector<std::string> warnings;   // binaries not found, code not readable
};

// An invalid regex, or one that selects no function with samples, is an invalid_input error.
core::Expected<DisasmReport> compute_disasm(const core::Profile& profile,
                                            const DisasmOptions& options);

std::string format_disasm(const DisasmReport& report);

}  // namespace tally::analyze
