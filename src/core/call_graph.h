// The call-graph shape of a profile (what callgrind writes): costs are not attributed to
// sampled stacks but to positions (self cost) and to call edges (inclusive cost of the
// calls from one call site to one target), with call counts, and to jumps.
//
// In the model, a call-graph profile keeps its self costs as ordinary samples whose stack
// is the one position where the cost arose, so that everything that works on samples
// (totals, merging, scaling, labels) works on self costs too; the edges and jumps live
// here. Positions are Locations: mapping = the ELF object, address = the instruction
// (0 when not given), one Line = the function (whose filename is the source file of that
// position) and the source line.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/string_table.h"

namespace tally::core {

using LocationId = uint32_t;

struct CallEdge {
  LocationId caller = 0;  // the call site, in the calling function
  LocationId callee = 0;  // the target position, in the called function
  int64_t count = 0;      // how many calls
  uint32_t part = 0;      // index into CallGraph::parts
  std::vector<int64_t> inclusive;  // cost spent in those calls, one value per sample type
  bool operator==(const CallEdge&) const = default;
};

struct Jump {
  LocationId from = 0;
  LocationId to = 0;
  int64_t executed = 0;  // how often the jump instruction ran (for `jump=`: how often it jumped)
  int64_t followed = 0;  // how often it was taken (conditional jumps; else == executed)
  bool conditional = false;
  uint32_t part = 0;
  bool operator==(const Jump&) const = default;
};

// An event (sample type) beyond its name: callgrind's long name, and for an inherited
// event its formula over the others ("Ir + 2 * Dr"), whose values the reader computed.
struct EventInfo {
  StringId long_name = 0;
  std::string formula;  // empty for a measured event
  bool operator==(const EventInfo&) const = default;
};

// One part (dump) of a callgrind file: a thread, a time slice, a process.
struct GraphPart {
  // pid, thread, part, cmd, desc: ... lines in their order, as key and value.
  std::vector<std::pair<std::string, std::string>> header;
  std::vector<int64_t> summary;  // "summary:" when given (one value per sample type)
  std::vector<int64_t> totals;   // "totals:" when given
  bool operator==(const GraphPart&) const = default;
};

// Code inlined from another source file (callgrind's fi=/fe=): its positions name that
// file (their Function's filename) but belong to a function defined in another file, its
// home (callgrind's fl=), under which a writer must list them. Kept by name rather than by
// id, so that renumbering (canonicalize) and merging leave it valid.
struct InlinedFile {
  std::string object;    // the mapping's file ("" for none)
  std::string function;  // the function's name
  std::string file;      // the file of the positions
  std::string home;      // the file of the function
  bool operator==(const InlinedFile&) const = default;
};

struct CallGraph {
  bool present = false;  // true: this profile has the call-graph shape
  std::vector<CallEdge> calls;
  std::vector<Jump> jumps;
  std::vector<GraphPart> parts;   // at least one when present
  std::vector<EventInfo> events;  // parallel to Profile::sample_types (may be empty)
  bool has_instr = false;         // positions carried instruction addresses
  bool has_line = true;           // positions carried line numbers
  std::vector<InlinedFile> inlined_files;  // only where file != home
  bool operator==(const CallGraph&) const = default;
};

}  // namespace tally::core
