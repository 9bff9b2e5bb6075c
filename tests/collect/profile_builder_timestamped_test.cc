// ProfileBuilder --off-cpu with timestamps, on a long record stream made here (no kernel):
// two threads switching 140k times (past two of the builder's 64k-span batches) between
// on-CPU samples, with preempted switch-outs, switch-outs without their sample, a span cut
// by the recording's end, and two on-CPU samples taken
// before the recording began (their timestamps both clamp to 0, so they are one sample).
// The expected samples are computed here from the stream, not by the builder: every span
// and every on-CPU sample is one sample with its own values and labels.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collect/event_spec.h"
#include "collect/profile_builder.h"

namespace tally::collect {
namespace {

constexpr uint32_t kPid = 200;
constexpr uint64_t kStart = 1'000'000;
constexpr uint64_t kEnd = 9'000'000'000;
constexpr uint64_t kKernelLeaf = 0xffffffff81000100;

// What a sample says, by names: its frames (addresses, or the marker's name), its labels
// and its values by sample type. The frames under the leaf are return addresses, which
// the builder turns into call sites (address - 1), as perf does.
struct Expected {
  std::vector<std::string> frames;
  std::map<std::string, std::string> labels;
  std::map<std::string, int64_t> values;
  bool operator==(const Expected&) const = default;
};
std::string text(const Expected& e) {
  std::string out = "frames";
  for (const std::string& f : e.frames) out += " " + f;
  out += "; labels";
  for (const auto& [k, v] : e.labels) out += " " + k + "=" + v;
  out += "; values";
  for (const auto& [k, v] : e.values) out += " " + k + "=" + std::to_string(v);
  return out;
}
using Key = std::tuple<int64_t, int64_t, std::string>;  // tid, timestamp, "cpu" or "off"

std::string hex(uint64_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(a));
  return buf;
}

class Stream {
 public:
  explicit Stream(ProfileBuilder& b) : b_(b) {}

  void map() {
    MmapRecord m;
    m.pid = m.tid = kPid;
    m.start = 0x400000;
    m.length = 0x10000;
    m.prot = PROT_READ | PROT_EXEC;
    m.filename = "/bin/pingpong";
    b_.on_mmap(m);
  }
  void name(uint32_t tid, const std::string& comm) {
    CommRecord c;
    c.pid = kPid;
    c.tid = tid;
    c.comm = comm;
    c.origin.time = 500;
    b_.on_comm(c);
    comms_[tid] = comm;
  }
  // An on-CPU sample of cpu-clock at `time` from user frames leaf, leaf + 0x100.
  void cpu(uint32_t tid, uint64_t time, uint64_t leaf, uint64_t period) {
    const std::vector<uint64_t> chain{static_cast<uint64_t>(PERF_CONTEXT_USER), leaf, leaf + 0x100};
    SampleRecord s;
    s.origin = {.pid = kPid, .tid = tid, .time = time, .cpu = tid % 2};
    s.misc = PERF_RECORD_MISC_USER;
    s.event = 0;
    s.ip = leaf;
    s.period = period;
    s.callchain = chain;
    b_.on_sample(s);
    Expected e{.frames = {hex(leaf), hex(leaf + 0x100 - 1)},
               .labels = {{"comm", comms_[tid]}, {"cpu", std::to_string(tid % 2)},
                          {"pid", std::to_string(kPid)}, {"tid", std::to_string(tid)},
                          {"timestamp", std::to_string(time > kStart ? time - kStart : 0)}},
               .values = {{"samples", 1}, {"cpu", int64_t(period)}, {"off-cpu", 0},
                          {"wall", int64_t(period)}}};
    add(Key{tid, time > kStart ? time - kStart : 0, "cpu"}, e);
  }
  // A switch-out at `out` (its sample with kernel leaf, user frame `leaf`, unless
  // `sampled` is false), back in at `in`.
  void wait(uint32_t tid, uint64_t out, uint64_t in, uint64_t leaf, bool preempted = false,
            bool sampled = true) {
    if (sampled) {
      const std::vector<uint64_t> chain{static_cast<uint64_t>(PERF_CONTEXT_KERNEL), kKernelLeaf,
                                        static_cast<uint64_t>(PERF_CONTEXT_USER), leaf};
      SampleRecord s;
      s.origin = {.pid = kPid, .tid = tid, .time = out};
      s.misc = PERF_RECORD_MISC_KERNEL;
      s.event = 1;
      s.ip = kKernelLeaf;
      s.period = 1;
      s.callchain = chain;
      b_.on_sample(s);
    }
    switch_out(tid, out, preempted);
    if (in == 0) {  // still off at the end
      add_span(tid, out, kEnd, sampled, preempted, "to_end");
      return;
    }
    switch_in(tid, in);
    add_span(tid, out, in, sampled, preempted, "");
  }
  void switch_out(uint32_t tid, uint64_t time, bool preempted) {
    SwitchRecord r;
    r.origin = {.pid = kPid, .tid = tid, .time = time};
    r.out = true;
    r.preempted = preempted;
    b_.on_switch(r);
  }
  void switch_in(uint32_t tid, uint64_t time) {
    SwitchRecord r;
    r.origin = {.pid = kPid, .tid = tid, .time = time};
    r.out = false;
    b_.on_switch(r);
  }
  void add_span(uint32_t tid, uint64_t start, uint64_t end, bool sampled, bool preempted,
                const std::string& edge) {
    Expected e;
    if (sampled) e.frames = {hex(kKernelLeaf), hex(last_leaf_ - 1)};
    else e.frames = {"[off-CPU, no stack recorded]"};
    e.labels = {{"comm", comms_[tid]}, {"pid", std::to_string(kPid)}, {"tid", std::to_string(tid)},
                {"reason", preempted ? "preempted" : sampled ? "other" : "blocked"},
                {"timestamp", std::to_string(start > kStart ? start - kStart : 0)}};
    if (!edge.empty()) e.labels["off_cpu_span"] = edge;
    e.values = {{"samples", 1}, {"cpu", 0}, {"off-cpu", int64_t(end - start)},
                {"wall", int64_t(end - start)}};
    add(Key{tid, start > kStart ? start - kStart : 0, "off"}, e);
  }
  void set_leaf(uint64_t leaf) { last_leaf_ = leaf; }

  std::map<Key, Expected> expected;
  size_t spans = 0;

 private:
  void add(const Key& key, const Expected& e) {
    if (std::get<2>(key) == "off") ++spans;
    auto [it, inserted] = expected.try_emplace(key, e);
    if (inserted) return;
    ASSERT_EQ(it->second.frames, e.frames) << "the stream's equal samples have equal stacks";
    for (auto& [type, v] : it->second.values) v += e.values.at(type);
  }
  ProfileBuilder& b_;
  std::map<uint32_t, std::string> comms_;
  uint64_t last_leaf_ = 0;
};

ProfileBuilderOptions timestamped_options() {
  ProfileBuilderOptions options;
  options.events = {*parse_event("cpu-clock"), *parse_event("context-switches")};
  options.call_graph = CallGraphMode::fp;
  options.kallsyms = "";  // kernel frames unnamed: the reason is "blocked"
  options.off_cpu = true;
  options.switch_event = 1;
  options.timestamps = true;
  return options;
}

// The stream: before the recording, two equal on-CPU samples of thread 201 (one sample
// after clamping); then 70k rounds of two threads waiting in turn, an on-CPU sample
// every 97 spans, every 13th span preempted, every 1001st without its sample; at the end
// 201 is still off. Kernel frames are unnamed here (no kallsyms): a blocked switch-out
// with a stack is "other", without one "blocked".
void play(ProfileBuilder& b, Stream& s) {
  b.recording_started(kStart);
  s.map();
  s.name(201, "ping");
  s.name(202, "pong");
  s.cpu(201, 10, 0x401000, 1'000'000);
  s.cpu(201, 20, 0x401000, 1'000'000);
  uint64_t t = kStart + 1000;
  size_t n = 0;
  for (int round = 0; round < 70'000; ++round) {
    for (uint32_t tid : {201u, 202u}) {
      const uint64_t leaf = 0x402000 + 0x10 * (n % 7);
      s.set_leaf(leaf);
      s.wait(tid, t, t + 700 + n % 5, leaf, n % 13 == 0, n % 1001 != 0);
      t += 1000;
      if (++n % 97 == 0) s.cpu(tid, t - 100, 0x403000 + 0x10 * (n % 3), 1'001'001);
    }
  }
  s.set_leaf(0x402000);
  s.wait(201, t, 0, 0x402000);
  b.recording_ended(kEnd);
}

std::map<Key, Expected> samples_of(const core::Profile& p) {
  std::map<Key, Expected> got;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    Expected e;
    for (core::LocationId id : p.stack(i)) {
      const core::Location& loc = p.location(id);
      if (loc.address != 0) e.frames.push_back(hex(loc.address));
      else e.frames.push_back(std::string(p.str(p.function(loc.lines.at(0).function).name)));
    }
    int64_t tid = -1, timestamp = -1;
    for (const core::Label& l : p.labels(i)) {
      const std::string key(p.str(l.key));
      e.labels[key] = l.str != 0 ? std::string(p.str(l.str)) : std::to_string(l.num);
      if (key == "tid") tid = l.num;
      if (key == "timestamp") timestamp = l.num;
    }
    for (size_t k = 0; k < p.sample_types.size(); ++k)
      e.values[std::string(p.str(p.sample_types[k].type))] = p.values(i)[k];
    const Key key{tid, timestamp, e.labels.count("reason") ? "off" : "cpu"};
    EXPECT_TRUE(got.emplace(key, e).second) << "two samples of tid " << tid << " at " << timestamp;
  }
  return got;
}

TEST(ProfileBuilderTimestamped, EverySpanAndSampleIsOneSampleWithItsOwnValuesAndLabels) {
  ProfileBuilder b(timestamped_options());
  Stream s(b);
  play(b, s);
  const core::Profile p = b.finish();
  EXPECT_EQ(b.stats().off_cpu_spans, s.spans);
  EXPECT_GT(s.spans, 2u * 65536u);
  const std::map<Key, Expected> got = samples_of(p);
  EXPECT_EQ(got.size(), s.expected.size());
  EXPECT_EQ(p.sample_count(), s.expected.size());
  size_t differ = 0;
  for (const auto& [key, want] : s.expected) {
    auto it = got.find(key);
    if (it == got.end() || !(it->second == want)) {
      if (++differ <= 3)
        ADD_FAILURE() << "tid " << std::get<0>(key) << " timestamp " << std::get<1>(key) << " "
                      << std::get<2>(key) << (it == got.end() ? ": missing" : ": got\n  " + text(it->second) + "\nwant\n  " + text(want));
    }
  }
  EXPECT_EQ(differ, 0u);
  // The two samples before the recording are one, their values summed.
  auto early = got.find(Key{201, 0, "cpu"});
  ASSERT_NE(early, got.end());
  EXPECT_EQ(early->second.values.at("samples"), 2);
  EXPECT_EQ(early->second.values.at("cpu"), 2'000'000);
}

}  // namespace
}  // namespace tally::collect

