// The `traces` report (pprof -traces): every sample, in the profile's order, with its
// value and its stack leaf first (inlined frames marked "(inline)"). Samples are not
// merged: two samples with the same functions but different addresses stay two traces,
// as in pprof. Focus/ignore drop samples, hide/show drop frames; a sample left with no
// frame is not shown. Each trace shows its sample's labels above the stack, as pprof
// does. Stack profiles only (a call graph has no stacks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/nodes.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct TracesOptions {
  NodeOptions nodes;
  NameFilters filters;
  std::string sample_index;
};

struct TraceFrame {
  std::string name;
  bool inline_frame = false;
};

struct Trace {
  int64_t value = 0;
  // pprof's label lines ("      comm:  split"): string labels, then numeric ones (with
  // their unit), each group sorted as text; several values of one key on one line.
  std::vector<std::string> labels;
  std::vector<TraceFrame> frames;  // leaf first
};

struct TracesReport {
  std::vector<std::string> header;  // pprof's profile labels: File, Type, Time, Duration
  std::string sample_unit;
  std::vector<Trace> traces;
};

core::Expected<TracesReport> compute_traces(const core::Profile& profile,
                                            const TracesOptions& options);

std::string format_traces(const TracesReport& report);

}  // namespace tally::analyze
