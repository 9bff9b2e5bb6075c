#include "analyze/timeline.h"

#include <algorithm>
#include <limits>
#include <span>
#include <unordered_map>

#include "analyze/time_filter.h"
#include "core/checked_math.h"

namespace tally::analyze {

namespace {

// The string ids of a key's name (a profile may hold a string twice only by mistake, but
// then both count).
std::vector<uint8_t> key_ids(const core::Profile& p, std::string_view name) {
  std::vector<uint8_t> out(p.strings.size(), 0);
  for (size_t id = 0; id < p.strings.size(); ++id)
    if (p.str(static_cast<core::StringId>(id)) == name) out[id] = 1;
  return out;
}

bool is_key(const std::vector<uint8_t>& ids, core::StringId key) { return key < ids.size() && ids[key]; }

struct ThreadBuild {
  int64_t tid = 0;
  core::StringId comm = 0;
  int64_t first = 0;
  int64_t on_cpu = 0, off_cpu = 0;
  // Its spans: ordered[offset, offset + on_spans) on-CPU, then off_spans off-CPU ones.
  size_t on_spans = 0, off_spans = 0, offset = 0;
};

struct RawSpan {
  uint32_t thread = 0;  // index into the ThreadBuilds
  TimelineSpan span;
};

bool span_before(const TimelineSpan& a, const TimelineSpan& b) {
  if (a.begin != b.begin) return a.begin < b.begin;
  if (a.end != b.end) return a.end < b.end;
  return a.state < b.state;
}

void sort_spans(std::span<TimelineSpan> spans) {
  if (!std::is_sorted(spans.begin(), spans.end(), span_before)) std::sort(spans.begin(), spans.end(), span_before);
}

// A thread's spans in time order, those of one state that touch (within `slack`) made one.
// A recording adds a thread's on-CPU samples in time order, and its off-CPU spans (which
// never overlap) too, but the two interleaved by batches: each kind is sorted apart (a
// check when it is already), then the two merged as they are read.
std::vector<TimelineSpan> merge_spans(std::span<TimelineSpan> on, std::span<TimelineSpan> off, int64_t slack) {
  sort_spans(on);
  sort_spans(off);
  std::vector<TimelineSpan> out;
  size_t i = 0, j = 0;
  while (i < on.size() || j < off.size()) {
    const bool take_on = j == off.size() || (i < on.size() && span_before(on[i], off[j]));
    const TimelineSpan& span = take_on ? on[i++] : off[j++];
    if (!out.empty() && out.back().state == span.state && span.begin <= out.back().end + slack) {
      out.back().end = std::max(out.back().end, span.end);
      continue;
    }
    out.push_back(span);
  }
  return out;
}

// Equal slots over [from, to), each given the state that covers most of it (none: empty),
// then runs of one state joined: at most `slots` spans. The spans lie within [from, to).
std::vector<TimelineSpan> coarsen(const std::vector<TimelineSpan>& spans, int64_t from, int64_t to,
                                  size_t slots, size_t states, int64_t& slot_width) {
  const int64_t length = to - from, count = static_cast<int64_t>(slots);
  slot_width = std::max<int64_t>(1, length / count + (length % count != 0 ? 1 : 0));
  std::vector<int64_t> cover(slots * states, 0);
  for (const TimelineSpan& span : spans) {
    const int64_t first = std::max<int64_t>(0, span.begin - from) / slot_width;
    const int64_t last = std::max<int64_t>(span.begin - from, span.end - from - 1) / slot_width;
    for (int64_t slot = first; slot <= last && slot < count; ++slot) {
      const int64_t slot_begin = from + slot * slot_width;
      const int64_t overlap = std::min(span.end, slot_begin + slot_width) - std::max(span.begin, slot_begin);
      // A point (no length) still marks its slot.
      int64_t& covered = cover[static_cast<size_t>(slot) * states + span.state];
      covered = core::add_saturating(covered, std::max<int64_t>(1, overlap));
    }
  }
  std::vector<TimelineSpan> out;
  for (size_t slot = 0; slot < slots; ++slot) {
    const int64_t* row = cover.data() + slot * states;
    const size_t best = static_cast<size_t>(std::max_element(row, row + states) - row);
    if (row[best] == 0) continue;
    const int64_t begin = from + static_cast<int64_t>(slot) * slot_width;
    const auto state = static_cast<uint32_t>(best);
    if (!out.empty() && out.back().state == state && out.back().end == begin) out.back().end += slot_width;
    else out.push_back({begin, begin + slot_width, state});
  }
  return out;
}

}  // namespace

core::Expected<Timeline> compute_timeline(const core::Profile& p, const TimelineOptions& options) {
  Timeline timeline;
  const SampleTimes times(p);
  if (!times.any()) return timeline;
  timeline.has_timestamps = true;
  NameFilters filters = options.filters;
  filters.time = TimeRange{};
  auto filter = LocationFilter::create(p, filters);
  if (!filter) return filter.error();
  timeline.warnings = filter->label_warnings();

  const std::vector<uint8_t> tid_key = key_ids(p, "tid"), comm_key = key_ids(p, "comm"),
                             reason_key = key_ids(p, "reason");
  const int off_value = p.sample_type_index("off-cpu"), cpu_value = p.sample_type_index("cpu");
  std::unordered_map<core::StringId, uint32_t> state_of_reason;  // reason string -> state
  std::unordered_map<int64_t, uint32_t> thread_index;
  std::vector<ThreadBuild> threads;
  std::vector<RawSpan> raw;  // one array for all threads: no regrowth per thread
  raw.reserve(p.sample_count());
  // The window, as the time-range filter reads a range: overlap with [start, end), a span
  // of no length where it lies. Spans are cut at its edges.
  const int64_t window_start = options.window.any() ? options.window.start_ns : 0;
  const int64_t window_end = options.window.any() ? options.window.end_ns : std::numeric_limits<int64_t>::max();
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const SampleTimes::Span span = times.span(s);
    if (!span.known || !filter->keeps(s, p.stack(s))) continue;
    int64_t tid = -1;
    core::StringId comm = 0, reason = 0;
    for (const core::Label& label : p.labels(s)) {
      if (label.str == 0 && is_key(tid_key, label.key)) tid = label.num;
      else if (label.str != 0 && is_key(comm_key, label.key)) comm = label.str;
      else if (label.str != 0 && is_key(reason_key, label.key)) reason = label.str;
    }
    auto [it, added] = thread_index.try_emplace(tid, static_cast<uint32_t>(threads.size()));
    if (added) {
      threads.emplace_back();
      threads.back().tid = tid;
      threads.back().first = span.begin;
    }
    ThreadBuild& thread = threads[it->second];
    if (thread.comm == 0) thread.comm = comm;
    thread.first = std::min(thread.first, span.begin);
    uint32_t state = 0;
    const std::span<const int64_t> values = p.values(s);
    if (span.off_cpu) {
      auto [r, new_reason] = state_of_reason.try_emplace(reason, static_cast<uint32_t>(timeline.reasons.size() + 1));
      if (new_reason) timeline.reasons.emplace_back(reason != 0 ? p.str(reason) : "off-cpu");
      state = r->second;
      thread.off_cpu = core::add_saturating(thread.off_cpu, values[off_value]);
    } else if (cpu_value >= 0) {
      thread.on_cpu = core::add_saturating(thread.on_cpu, values[cpu_value]);
    }
    timeline.end = std::max(timeline.end, span.end);
    const bool in_window = span.begin < window_end &&
                           (span.end > window_start || (span.begin == span.end && span.begin >= window_start));
    if (!in_window) continue;
    ++(state == 0 ? thread.on_spans : thread.off_spans);
    raw.push_back({it->second, {std::max(span.begin, window_start), std::min(span.end, window_end), state}});
  }
  timeline.window_end = std::min(window_end, timeline.end);
  timeline.window_begin = std::min(window_start, timeline.window_end);
  // Each thread's on-CPU spans together, then its off-CPU ones, each in sample order (a
  // counting sort).
  std::vector<TimelineSpan> ordered(raw.size());
  {
    std::vector<size_t> next(2 * threads.size());
    size_t offset = 0;
    for (size_t t = 0; t < threads.size(); ++t) {
      threads[t].offset = offset;
      next[2 * t] = offset;
      next[2 * t + 1] = offset + threads[t].on_spans;
      offset += threads[t].on_spans + threads[t].off_spans;
    }
    for (const RawSpan& r : raw) ordered[next[2 * r.thread + (r.span.state != 0)]++] = r.span;
    std::vector<RawSpan>().swap(raw);
  }

  // The threads with the most time, shown by first sample.
  if (threads.size() > options.max_threads) {
    std::stable_sort(threads.begin(), threads.end(), [](const ThreadBuild& a, const ThreadBuild& b) {
      return core::add_saturating(a.on_cpu, a.off_cpu) > core::add_saturating(b.on_cpu, b.off_cpu);
    });
    timeline.threads_omitted = threads.size() - options.max_threads;
    threads.resize(options.max_threads);
  }
  std::stable_sort(threads.begin(), threads.end(), [](const ThreadBuild& a, const ThreadBuild& b) {
    return a.first != b.first ? a.first < b.first : a.tid < b.tid;
  });

  // Samples of one state less than half a sampling period apart are one span.
  const bool period_in_ns = p.str(p.period_type.unit) == "nanoseconds" && p.period > 0;
  const int64_t slack = period_in_ns ? p.period / 2 : 500'000;
  const size_t states = timeline.reasons.size() + 1;
  for (ThreadBuild& build : threads) {
    TimelineThread thread;
    thread.tid = build.tid;
    thread.name = build.comm != 0 ? std::string(p.str(build.comm)) : "";
    thread.on_cpu = build.on_cpu;
    thread.off_cpu = build.off_cpu;
    const std::span<TimelineSpan> spans = std::span<TimelineSpan>(ordered).subspan(build.offset);
    thread.spans = merge_spans(spans.first(build.on_spans), spans.subspan(build.on_spans, build.off_spans), slack);
    if (thread.spans.size() > options.max_spans_per_thread) {
      thread.coarsened = true;
      thread.spans = coarsen(thread.spans, timeline.window_begin, timeline.window_end,
                             std::max<size_t>(1, options.max_spans_per_thread), states, thread.slot);
    }
    timeline.threads.push_back(std::move(thread));
  }
  return timeline;
}

}  // namespace tally::analyze
