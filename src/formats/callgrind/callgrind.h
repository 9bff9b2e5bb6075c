// The Callgrind format (../shared/specs/callgrind-format.xml), as valgrind's callgrind,
// KCachegrind, callgrind_annotate, pprof -callgrind and the lsprof-style Python exporters
// write and read it.
//
// In the model (core/call_graph.h) a callgrind file is a call-graph profile: every self
// cost is a sample whose stack is the one position where it arose; call edges (inclusive
// costs, call counts) and jumps are in call_graph. A position is a Location: mapping = the
// object (ob=), address = the instruction (0 without "instr"), one Line whose function is
// named by fn= and whose Function::filename is the source file of the position (fl=, or
// fi=/fe= inside inlined code; the function's own file is then in
// call_graph.inlined_files). Event "Ir" is sample type Ir/count, "cpu(ms)" is cpu/ms.
// Inherited events (event: Sum = Ir + 2 * Dr) become extra sample types whose values the
// reader computes. A file of several parts labels each sample with the number "part"
// (1-based); a file of one part has no labels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/position_detail.h"
#include "core/profile.h"

namespace tally::callgrind {

// Like KCachegrind: the first line is "# callgrind format", or a line of the first 8 KB
// starts with "events:", or the first header line is "version: N" or "creator:". Text
// only: never claims binary data (gperftools, protobuf), folded stacks, perf script or DCPI.
bool looks_like_callgrind(std::span<const uint8_t> bytes);

// The whole grammar and the real-world dialect (see callgrind_reader.cc). Errors read
// "SOURCE: line N: ..."; what is skipped (rec=, bb=, ...) or inconsistent (a totals: line
// that is not the sum of the costs) is reported in `diagnostics`.
// `on_progress(bytes_done, context)`, if given, is called every few MB. With `detail`
// functions, every (object, function, file) is one location at address 0, line 0: self
// costs, call edges (per caller and callee function) and jumps are summed per function;
// what a report by function shows is the same as after a full read. `counts`, with
// functions, receives what the full read would have made (distinct positions kept
// compactly, about 20 bytes each, instead of a location each).
core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes,
                                           const std::string& source,
                                           core::Diagnostics& diagnostics,
                                           void (*on_progress)(uint64_t, void*) = nullptr,
                                           void* progress_context = nullptr,
                                           core::PositionDetail detail = core::PositionDetail::full,
                                           core::PositionCounts* counts = nullptr);

// How read_profile spreads its work: `threads` threads cut the text into lines and scan
// the numbers of its cost lines, chunk by chunk (`chunk_bytes` each), ahead of the thread
// that applies the lines in file order (see chunk_lexer.h); 0 threads: the applying thread
// scans too. The profile, its diagnostics and its errors are the same for any setting.
struct Lexing {
  unsigned threads = 0;
  size_t chunk_bytes = 64 << 10;
};

// What read_profile uses: for a text of 4 MB or more, lexer threads on the cores but one
// (at most 8), when the machine has a core to spare: its load average over the last minute
// below cores - 0.5. On a busy machine threads add CPU time (a third more for `cat
// --summary`) and save no wall time. Else none.
Lexing default_lexing(size_t text_bytes, unsigned cores, double load_average);
Lexing default_lexing(size_t text_bytes);  // with this machine's cores and load average

// read_profile with a given Lexing (tests and benchmarks compare settings).
core::Expected<core::Profile> read_profile_with(std::span<const uint8_t> bytes,
                                                const std::string& source,
                                                core::Diagnostics& diagnostics,
                                                const Lexing& lexing,
                                                void (*on_progress)(uint64_t, void*) = nullptr,
                                                void* progress_context = nullptr,
                                                core::PositionDetail detail = core::PositionDetail::full,
                                                core::PositionCounts* counts = nullptr);

struct WriteOptions {
  bool compress_names = true;      // "fn=(12) name" once, then "fn=(12)"
  bool compress_positions = true;  // "+4", "-2", "*" relative to the previous cost line
};

// A call-graph profile is written as it is (a read file comes back with the same costs,
// edges, jumps, parts and header lines). A stack profile is first turned into a call graph
// the way `pprof -callgrind` does it (call_graph_from_stacks). Positions are
// "instr line" when the profile has addresses, else "line"; "totals:" ends every part.
core::Expected<std::string> write_callgrind(const core::Profile& profile,
                                            const WriteOptions& options,
                                            core::Diagnostics& diagnostics);

// Stacks -> call graph, pprof's rule (google/pprof internal/graph): each frame (a
// location's line; inline frames apart) is a position; a sample's value is self cost of its
// leaf frame and inclusive cost of every caller->callee edge on its stack, counted once per
// sample even when recursion repeats the edge, and never for a frame calling itself at the
// same position. An edge's call count is the number of samples through it (the "samples"
// count when the profile has one). Labels are dropped (reported).
core::Expected<core::Profile> call_graph_from_stacks(const core::Profile& profile,
                                                     core::Diagnostics& diagnostics);

// Call graph -> stacks, for formats that hold only stacks (`--approximate`): every self
// cost becomes a one-frame stack; call edges, call counts and jumps are dropped, and the
// loss is reported. A stack profile comes back unchanged.
core::Expected<core::Profile> approximate_stacks(const core::Profile& profile,
                                                 core::Diagnostics& diagnostics);

}  // namespace tally::callgrind
