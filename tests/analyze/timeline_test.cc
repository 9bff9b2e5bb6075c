// The per-thread timeline model and the time-range filter (issue 23) on hand-made profiles
// whose spans are known: two threads, on-CPU samples stamped at the end of their 10 ms
// period and off-CPU samples at the start of their wait, as tally record --off-cpu stamps them.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "analyze/time_filter.h"
#include "analyze/timeline.h"
#include "analyze/top.h"
#include "core/profile.h"

namespace tally::analyze {
namespace {

constexpr int64_t kMs = 1'000'000;

class ProfileMaker {
 public:
  explicit ProfileMaker(bool timestamps = true) : timestamps_(timestamps) {
    p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds"),
                      p.value_type("off-cpu", "nanoseconds"), p.value_type("wall", "nanoseconds")};
    p.period_type = p.sample_types[1];
    p.period = 10 * kMs;
    p.default_sample_type = p.intern("wall");
  }
  // An on-CPU sample of `cpu` ns stamped at `end` (ms), in function `leaf` under main.
  void on(int64_t tid, const std::string& comm, int64_t end_ms, const std::string& leaf, int64_t cpu = 10 * kMs) {
    add(tid, comm, end_ms * kMs, leaf, {1, cpu, 0, cpu}, "");
  }
  // An off-CPU wait from `start` (ms) for `ms` milliseconds.
  void off(int64_t tid, const std::string& comm, int64_t start_ms, int64_t ms, const std::string& leaf,
           const std::string& reason) {
    add(tid, comm, start_ms * kMs, leaf, {1, 0, ms * kMs, ms * kMs}, reason);
  }
  core::Profile p;

  void add(int64_t tid, const std::string& comm, int64_t time, const std::string& leaf,
           std::vector<int64_t> values, const std::string& reason) {
    const core::LocationId stack[] = {location(leaf), location("main")};
    std::vector<core::Label> labels{{.key = p.intern("comm"), .str = p.intern(comm)},
                                    {.key = p.intern("tid"), .num = tid}};
    if (!reason.empty()) labels.push_back({.key = p.intern("reason"), .str = p.intern(reason)});
    if (timestamps_) labels.push_back({.key = p.intern("timestamp"), .num = time, .num_unit = p.intern("nanoseconds")});
    p.add_sample(stack, values, labels);
  }

 private:
  core::LocationId location(const std::string& name) {
    for (core::LocationId id = 1; id <= p.locations.size(); ++id)
      if (p.str(p.function(p.location(id).lines[0].function).name) == name) return id;
    const auto f = p.add_function({.name = p.intern(name)});
    return p.add_location({.address = p.locations.size() + 1, .lines = {{.function = f}}});
  }
  bool timestamps_;
};

// main: burns 0-100 ms, sleeps 100-300 ms, burns 300-400 ms. worker: waits on a futex
// 0-250 ms, then runs 250-300 ms.
core::Profile two_threads() {
  ProfileMaker m;
  for (int64_t t = 10; t <= 100; t += 10) m.on(100, "main", t, "burn");
  m.off(100, "main", 100, 200, "nanosleep", "sleep");
  m.off(101, "worker", 0, 250, "futex_wait", "futex");
  for (int64_t t = 310; t <= 400; t += 10) m.on(100, "main", t, "burn_again");
  for (int64_t t = 260; t <= 300; t += 10) m.on(101, "worker", t, "work");
  return std::move(m.p);
}

std::string state_name(const Timeline& t, uint32_t state) {
  return state == 0 ? "on" : t.reasons.at(state - 1);
}

// A thread's spans as "BEGIN-END:STATE ..." in milliseconds, for one comparison per thread.
std::string spans_ms(const Timeline& t, const TimelineThread& thread) {
  std::string text;
  for (const TimelineSpan& span : thread.spans) {
    if (!text.empty()) text += ' ';
    text += std::to_string(span.begin / kMs) + "-" + std::to_string(span.end / kMs) + ":" +
            state_name(t, span.state);
  }
  return text;
}

TEST(Timeline, AdjacentSamplesBecomeSpansPerThreadInTimeOrder) {
  auto t = compute_timeline(two_threads(), {});
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_TRUE(t->has_timestamps);
  EXPECT_EQ(t->end, 400 * kMs);
  ASSERT_EQ(t->threads.size(), 2u);
  const TimelineThread& main = t->threads[0];
  EXPECT_EQ(main.tid, 100);
  EXPECT_EQ(main.name, "main");
  EXPECT_FALSE(main.coarsened);
  EXPECT_EQ(main.on_cpu, 200 * kMs);
  EXPECT_EQ(main.off_cpu, 200 * kMs);
  EXPECT_EQ(spans_ms(*t, main), "0-100:on 100-300:sleep 300-400:on");
  const TimelineThread& worker = t->threads[1];
  EXPECT_EQ(worker.tid, 101);
  EXPECT_EQ(worker.name, "worker");
  EXPECT_EQ(spans_ms(*t, worker), "0-250:futex 250-300:on");
}

TEST(Timeline, SamplesOutOfTimeOrderGiveTheSameSpans) {
  // two_threads' samples added latest first.
  ProfileMaker m;
  for (int64_t t = 300; t >= 260; t -= 10) m.on(101, "worker", t, "work");
  for (int64_t t = 400; t >= 310; t -= 10) m.on(100, "main", t, "burn_again");
  m.off(101, "worker", 0, 250, "futex_wait", "futex");
  m.off(100, "main", 100, 200, "nanosleep", "sleep");
  for (int64_t t = 100; t >= 10; t -= 10) m.on(100, "main", t, "burn");
  auto shuffled = compute_timeline(m.p, {});
  auto ordered = compute_timeline(two_threads(), {});
  ASSERT_TRUE(shuffled && ordered);
  ASSERT_EQ(shuffled->threads.size(), 2u);
  for (size_t t = 0; t < 2; ++t) {
    const TimelineThread& a = shuffled->threads[t];
    const TimelineThread& b = ordered->threads[t];
    EXPECT_EQ(a.tid, b.tid);
    ASSERT_EQ(a.spans.size(), b.spans.size()) << a.tid;
    for (size_t i = 0; i < a.spans.size(); ++i) {
      EXPECT_EQ(a.spans[i].begin, b.spans[i].begin);
      EXPECT_EQ(a.spans[i].end, b.spans[i].end);
      EXPECT_EQ(state_name(*shuffled, a.spans[i].state), state_name(*ordered, b.spans[i].state));
    }
  }
}

TEST(Timeline, FiltersOtherThanTimeChooseTheSamplesDrawn) {
  TimelineOptions options;
  options.filters.labels.focus = {"comm=worker"};
  options.filters.time = *parse_time_range("0:0.01");  // ignored: the timeline shows all the time
  auto t = compute_timeline(two_threads(), options);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->threads.size(), 1u);
  EXPECT_EQ(t->threads[0].tid, 101);
  EXPECT_EQ(t->threads[0].spans.size(), 2u);
}

TEST(Timeline, TooManySpansAreCoarsenedIntoSlotsOfTheirMainState) {
  // 0-200 ms: runs 8 ms, preempted 2 ms, 20 times; 200-400 ms: sleeps 8 ms, runs 2 ms.
  ProfileMaker m;
  for (int64_t t = 0; t < 200; t += 10) {
    m.on(7, "busy", t + 8, "burn", 8 * kMs);
    m.off(7, "busy", t + 8, 2, "schedule", "preempted");
  }
  for (int64_t t = 200; t < 400; t += 10) {
    m.off(7, "busy", t, 8, "nanosleep", "sleep");
    m.on(7, "busy", t + 10, "burn", 2 * kMs);
  }
  TimelineOptions options;
  auto exact = compute_timeline(m.p, options);
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->threads[0].spans.size(), 80u);
  EXPECT_FALSE(exact->threads[0].coarsened);
  options.max_spans_per_thread = 4;
  auto t = compute_timeline(m.p, options);
  ASSERT_TRUE(t) << t.error().message;
  const TimelineThread& busy = t->threads[0];
  EXPECT_TRUE(busy.coarsened);
  EXPECT_EQ(busy.slot, 100 * kMs);
  EXPECT_EQ(spans_ms(*t, busy), "0-200:on 200-400:sleep");
  // The totals stay exact.
  EXPECT_EQ(busy.on_cpu, 200 * kMs);
  EXPECT_EQ(busy.off_cpu, 200 * kMs);
}

TEST(Timeline, AWindowKeepsTheSpansWithinItCutAtItsEdges) {
  TimelineOptions options;
  options.window = *parse_time_range("0.05:0.2");
  auto t = compute_timeline(two_threads(), options);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->end, 400 * kMs);  // the recording's, whatever the window
  EXPECT_EQ(t->window_begin, 50 * kMs);
  EXPECT_EQ(t->window_end, 200 * kMs);
  ASSERT_EQ(t->threads.size(), 2u);  // the whole recording's threads, in its order
  const TimelineThread& main = t->threads[0];
  EXPECT_EQ(main.tid, 100);
  EXPECT_EQ(main.on_cpu, 200 * kMs);  // totals of all the time
  EXPECT_EQ(spans_ms(*t, main), "50-100:on 100-200:sleep");
  const TimelineThread& worker = t->threads[1];
  EXPECT_EQ(spans_ms(*t, worker), "50-200:futex");  // its work (250-300 ms) is outside

  // An open end is the recording's end; a window after it shows nothing.
  options.window = *parse_time_range("0.35:");
  auto tail = compute_timeline(two_threads(), options);
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->window_begin, 350 * kMs);
  EXPECT_EQ(tail->window_end, 400 * kMs);
  ASSERT_EQ(tail->threads[0].spans.size(), 1u);
  EXPECT_EQ(tail->threads[0].spans[0].begin, 350 * kMs);
  EXPECT_EQ(tail->threads[0].spans[0].end, 400 * kMs);
  EXPECT_TRUE(tail->threads[1].spans.empty());
  options.window = *parse_time_range("5:6");
  auto after = compute_timeline(two_threads(), options);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->window_begin, 400 * kMs);
  EXPECT_EQ(after->window_end, 400 * kMs);
  for (const TimelineThread& thread : after->threads) EXPECT_TRUE(thread.spans.empty());
}

TEST(Timeline, TheSpanBoundAppliesToTheWindow) {
  // 2 s of 1 ms on-CPU, 1 ms preempted: 2000 spans, coarsened at a bound of 100.
  ProfileMaker m;
  for (int64_t t = 0; t < 2000; t += 2) {
    m.on(7, "busy", t + 1, "burn", 1 * kMs);
    m.off(7, "busy", t + 1, 1, "schedule", "preempted");
  }
  TimelineOptions options;
  options.max_spans_per_thread = 100;
  auto whole = compute_timeline(m.p, options);
  ASSERT_TRUE(whole);
  EXPECT_TRUE(whole->threads[0].coarsened);
  EXPECT_EQ(whole->threads[0].slot, 20 * kMs);
  // 40 ms in the middle: 40 spans of 1 ms, exact.
  options.window = *parse_time_range("1.000:1.040");
  auto t = compute_timeline(m.p, options);
  ASSERT_TRUE(t) << t.error().message;
  const TimelineThread& busy = t->threads[0];
  EXPECT_FALSE(busy.coarsened);
  ASSERT_EQ(busy.spans.size(), 40u);
  for (size_t i = 0; i < busy.spans.size(); ++i) {
    EXPECT_EQ(busy.spans[i].begin, 1000 * kMs + static_cast<int64_t>(i) * kMs) << i;
    EXPECT_EQ(busy.spans[i].end, 1001 * kMs + static_cast<int64_t>(i) * kMs) << i;
    EXPECT_EQ(state_name(*t, busy.spans[i].state), i % 2 == 0 ? "on" : "preempted") << i;
  }
  // A window wider than the bound is coarsened into slots of the window, starting at it.
  options.window = *parse_time_range("1.000:1.400");
  auto wide = compute_timeline(m.p, options);
  ASSERT_TRUE(wide);
  EXPECT_TRUE(wide->threads[0].coarsened);
  EXPECT_EQ(wide->threads[0].slot, 4 * kMs);
  ASSERT_FALSE(wide->threads[0].spans.empty());
  EXPECT_EQ(wide->threads[0].spans.front().begin, 1000 * kMs);
  EXPECT_EQ(wide->threads[0].spans.back().end, 1400 * kMs);
}

TEST(Timeline, ExtremeTimesAndValuesFromAFileStayBounded) {
  // What a crafted file may hold: no overflow (UBSan runs these in CI), spans within bounds.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  ProfileMaker m;
  m.add(1, "a", kMax, "f", {1, 0, kMax, kMax}, "sleep");
  m.add(1, "a", kMin, "g", {1, kMax, 0, kMax}, "");
  m.add(2, "b", -5, "h", {1, 0, kMax, kMax}, "io");
  m.add(2, "b", 7, "h", {1, kMax, 0, kMax}, "");
  TimelineOptions options;
  options.max_spans_per_thread = 1;
  auto t = compute_timeline(m.p, options);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->end, int64_t{1} << 62);
  for (const TimelineThread& thread : t->threads)
    for (const TimelineSpan& span : thread.spans) {
      EXPECT_GE(span.begin, 0);
      EXPECT_LE(span.begin, span.end);
      EXPECT_LE(span.end, int64_t{1} << 62);
    }
  // The filter's verdicts: b's on-CPU sample (stamped at 7 ns, 2^61 ns long) begins at 0.
  auto filter = SampleTimeFilter::create(m.p, *parse_time_range("0:0.000000001"));
  ASSERT_TRUE(filter);
  EXPECT_FALSE(filter->keeps(0));  // a's wait begins at 2^61
  EXPECT_TRUE(filter->keeps(1));   // a's negative stamp is 0
  EXPECT_TRUE(filter->keeps(2));   // so is b's
  EXPECT_TRUE(filter->keeps(3));
}

TEST(Timeline, OnlyTheThreadsWithMostTimeAreKept) {
  TimelineOptions options;
  options.max_threads = 1;
  auto t = compute_timeline(two_threads(), options);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->threads.size(), 1u);
  EXPECT_EQ(t->threads[0].tid, 100);  // 400 ms against the worker's 300
  EXPECT_EQ(t->threads_omitted, 1u);
}

TEST(Timeline, ProfileWithoutTimestampsHasNone) {
  ProfileMaker m(/*timestamps=*/false);
  m.on(1, "main", 10, "burn");
  auto t = compute_timeline(m.p, {});
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->has_timestamps);
  EXPECT_TRUE(t->threads.empty());
  // A time range has nothing to select by: a clear error, not an empty report.
  TopOptions top;
  top.filters.time = *parse_time_range("0:1");
  auto report = compute_top(m.p, top);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().kind, core::ErrorKind::invalid_input);
  EXPECT_NE(report.error().message.find("no timestamps"), std::string::npos) << report.error().message;
}

TEST(TimeRange, Parses) {
  auto r = parse_time_range("0.2:0.4");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->start_ns, 200 * kMs);
  EXPECT_EQ(r->end_ns, 400 * kMs);
  r = parse_time_range(":2");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->start_ns, 0);
  EXPECT_EQ(r->end_ns, 2000 * kMs);
  r = parse_time_range("1.5:");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->start_ns, 1500 * kMs);
  EXPECT_GT(r->end_ns, int64_t{1} << 62);
  r = parse_time_range(".25:1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->start_ns, 250 * kMs);
  EXPECT_FALSE(parse_time_range("").value().any());
  for (const char* bad : {"1", ":", "0.4:0.2", "1:1", "-1:2", "1:2:3", "nan:1", "inf:", "a:b", "1s:2s", " 1:2"}) {
    auto e = parse_time_range(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_EQ(e.error().kind, core::ErrorKind::invalid_input);
    EXPECT_NE(e.error().message.find(bad), std::string::npos) << e.error().message;
  }
}

int64_t flat_of(const TopReport& r, const std::string& name) {
  for (const TopRow& row : r.rows)
    if (row.name == name) return row.flat;
  return -1;
}

TEST(TimeRange, KeepsTheSamplesWhoseSpanOverlapsItCutToTheRange) {
  const core::Profile p = two_threads();
  TopOptions top;
  top.sample_index = "wall";
  top.filters.time = *parse_time_range("0.15:0.25");
  auto r = compute_top(p, top);
  ASSERT_TRUE(r) << r.error().message;
  // The sleep (100-300 ms) and the futex wait (0-250 ms) overlap it, counted for their
  // 100 ms inside it; the burns do not, nor the worker's first run (250-260 ms: it begins
  // where the range ends).
  EXPECT_EQ(flat_of(*r, "nanosleep"), 100 * kMs);
  EXPECT_EQ(flat_of(*r, "futex_wait"), 100 * kMs);
  EXPECT_EQ(flat_of(*r, "burn"), -1);
  EXPECT_EQ(flat_of(*r, "burn_again"), -1);
  EXPECT_EQ(flat_of(*r, "work"), -1);
  int64_t kept = 0;
  for (const TopRow& row : r->rows) kept += row.flat;
  EXPECT_EQ(kept, 200 * kMs);
  // The count of samples is not cut: one sample each.
  top.sample_index = "samples";
  r = compute_top(p, top);
  ASSERT_TRUE(r);
  EXPECT_EQ(flat_of(*r, "nanosleep"), 1);
  EXPECT_EQ(flat_of(*r, "futex_wait"), 1);
  top.sample_index = "wall";

  // An on-CPU sample covers the period before its stamp: 0.095-0.1 s holds burn's last one,
  // counted whole (a point sample is not cut), and 5 ms of the futex wait.
  top.filters.time = *parse_time_range("0.095:0.1");
  r = compute_top(p, top);
  ASSERT_TRUE(r);
  EXPECT_EQ(flat_of(*r, "burn"), 10 * kMs);
  EXPECT_EQ(flat_of(*r, "futex_wait"), 5 * kMs);
  EXPECT_EQ(flat_of(*r, "nanosleep"), -1);

  // Nothing there: an empty report with a warning.
  top.filters.time = *parse_time_range("5:6");
  r = compute_top(p, top);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->rows.empty());
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_NE(r->warnings[0].find("--time-range 5:6 matched no sample"), std::string::npos);
}

}  // namespace
}  // namespace tally::analyze
