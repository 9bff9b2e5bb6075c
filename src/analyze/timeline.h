// The per-thread timeline of a profile whose samples carry timestamps (tally record
// --off-cpu): for each thread, its on-CPU and off-CPU spans in time order, off-CPU ones by
// reason. Samples next to each other in one state become one span. The model is bounded
// for the web UI (/api/timeline): a thread with more spans than max_spans_per_thread is
// coarsened into equal time slots, each showing the state that covered most of it, and only
// the max_threads threads with the most time are kept. A window (the web UI's zoom) keeps
// only the spans within it, cut at its edges, and the bound applies to the window: a small
// window of a long recording is drawn span by span.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/name_filter.h"
#include "analyze/time_filter.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct TimelineOptions {
  // Which samples are drawn (focus, labels...); a time range in it is ignored: the range is
  // the timeline's selection, drawn over the recording (or the window).
  NameFilters filters;
  // The time shown, ns since the recording began: [window.start_ns, window.end_ns), ends
  // beyond the recording's cut to it. No range (the default): the whole recording.
  TimeRange window;
  size_t max_spans_per_thread = 2000;
  size_t max_threads = 64;
};

struct TimelineSpan {
  int64_t begin = 0, end = 0;  // nanoseconds since the recording began
  uint32_t state = 0;          // 0: on-CPU; r > 0: off-CPU for Timeline::reasons[r - 1]
};

struct TimelineThread {
  int64_t tid = 0;
  std::string name;  // its comm label, "" when unknown
  int64_t on_cpu = 0, off_cpu = 0;  // nanoseconds, summed over its samples (all the time)
  bool coarsened = false;
  int64_t slot = 0;  // coarsened: the width of a slot, nanoseconds
  std::vector<TimelineSpan> spans;  // by begin, within the window
};

struct Timeline {
  bool has_timestamps = false;
  int64_t end = 0;  // the last span's end (the recording begins at 0)
  // The time the spans are drawn in: [0, end) without a window, else the window cut to it.
  int64_t window_begin = 0, window_end = 0;
  std::vector<std::string> reasons;  // off-CPU reasons, by first appearance
  std::vector<TimelineThread> threads;  // by first sample, then tid
  size_t threads_omitted = 0;
  std::vector<std::string> warnings;
};

core::Expected<Timeline> compute_timeline(const core::Profile& profile, const TimelineOptions& options);

}  // namespace tally::analyze
