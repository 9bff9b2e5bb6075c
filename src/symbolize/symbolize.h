// Symbolization (issue 5): resolves the addresses of a profile's locations to functions,
// source lines and inline frames from the binaries' ELF symbol tables and DWARF, with
// elfutils libdw; finds the binaries and their separate debug files; never spawns
// addr2line or objdump.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"
#include "symbolize/debuginfod_fetch.h"
#include "symbolize/inflated_copies.h"

namespace tally::symbolize {

// How function names are written into Function::name (system_name always keeps the
// symbol as the binary has it, mangled).
enum class NameStyle {
  full,        // "ns::f(int) const", as `addr2line -C` prints it
  simplified,  // "ns::f", without parameters or template arguments, as pprof shows it
};

struct Options {
  // Directories searched for the binaries (--binary-path), before $PPROF_BINARY_PATH
  // (':'-separated), which symbolize() appends itself. Each DIR is tried as
  // DIR/basename and DIR/full/path of the mapping's file.
  std::vector<std::string> binary_paths;
  unsigned threads = 0;  // 0: all cores
  NameStyle names = NameStyle::full;
  // true (reports): an address no binary resolves gets a line named "[libfoo.so+0x1234]".
  // false (convert): it keeps no line, so that the output holds the raw address, which a
  // later symbolizer given the binary can still resolve.
  bool name_unresolved = true;
  // The debug files not found here come from the debuginfod servers of $DEBUGINFOD_URLS.
  DebuginfodOptions debuginfod;
  // Not null: compressed debug files are read from inflated copies kept there (a caller
  // symbolizing the same images again and again: the daemon's pushes).
  InflatedCopies* inflated_copies = nullptr;
  // true: an image whose addresses sized symbols all hold reads no PLT entries nor
  // call-frame ranges, whose problems then go unsaid (the daemon's pushes: a few new
  // addresses an image, each interval).
  bool index_only_what_is_needed = false;
  // true (-v): a note per image says where its symbols came from, and every path searched.
  bool explain_sources = false;
};

// Resolves every location whose mapping does not already have functions and whose lines
// are empty: fills Location::lines (innermost inline frame first, as pprof), interns the
// Function entries and sets the mapping's has_functions / has_filenames /
// has_line_numbers / has_inline_frames. An address that cannot be resolved gets one line
// whose function is named "[libfoo.so+0x1234]" (the file offset), unless
// options.name_unresolved is false. A missing binary is reported once in `diagnostics`,
// with the paths searched.
core::Status symbolize(core::Profile& profile, const Options& options,
                       core::Diagnostics& diagnostics);

// A binary with .dynsym alone is warned about as "PATH" kNoDebugSymbols "; REMEDY", once
// per report, so that the command line can also sum them up in one line.
inline constexpr std::string_view kNoDebugSymbols = ": no debug symbols (.dynsym only)";

// The paths of the binaries symbolize() warned have .dynsym alone, in warning order.
std::vector<std::string> binaries_without_debug_symbols(const core::Diagnostics& diagnostics);

// One line for all of them, which tally record keeps in the profile's comments so that a
// report's header says it once: "symbols: 2 of 3 binaries have no debug symbols (.dynsym
// only): xz, liblzma.so.5.4.1" (the first 6 names, then "and N more"). "of 3": `stripped`
// and the profile's other binaries with functions, pseudo-files ("[vdso]") aside.
std::string missing_symbols_summary(const core::Profile& profile,
                                    const std::vector<std::string>& stripped);

}  // namespace tally::symbolize
