#include "collect/profile_builder.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "collect/frameless_callers.h"
#include "collect/kernel_symbols.h"
#include "collect/off_cpu.h"
#include "collect/process_maps.h"
#include "collect/sample_stack.h"
#include "core/hash.h"
#include "core/sample_merger.h"

namespace tally::collect {

namespace {

struct LocationKey {
  core::MappingId mapping;
  uint64_t address;
  bool operator==(const LocationKey&) const = default;
};
struct LocationKeyHash {
  size_t operator()(const LocationKey& k) const {
    return core::mix64(k.address ^ (uint64_t(k.mapping) << 48));
  }
};

// What makes two processes' mappings one image mapping of the profile: the same file
// (path and build id) at the same place.
struct MappingKey {
  std::string path, build_id;
  uint64_t start, limit, pgoff;
  auto operator<=>(const MappingKey&) const = default;
};

}  // namespace

struct ProfileBuilder::State {
  ProfileBuilderOptions options;
  core::Profile profile;
  std::optional<core::SampleMerger> merger;
  ProcessTable processes;
  SampleStack sample_stack;
  KernelSymbols kernel_symbols;
  bool kernel_symbols_loaded = false;
  core::MappingId kernel_mapping = 0;
  std::unordered_map<core::StringId, core::FunctionId> kernel_functions;
  std::map<MappingKey, core::MappingId> mapping_ids;
  // Per process: profile mapping of each of its mappings (by start), valid for one
  // generation of its address space.
  struct MappingCache {
    uint64_t generation = 0;
    std::unordered_map<uint64_t, core::MappingId> by_start;
  };
  std::unordered_map<pid_t, MappingCache> mapping_cache;
  std::unordered_map<LocationKey, core::LocationId, LocationKeyHash> locations;
  std::unordered_map<pid_t, core::StringId> comms;  // by tid
  pid_t main_pid = 0;
  std::string main_path;  // the target's executable: its first file mapping after exec
  core::StringId pid_key = 0, tid_key = 0, comm_key = 0, cpu_key = 0;
  ProfileBuilderStats stats;
  // --off-cpu.
  std::vector<size_t> value_of_event;  // value index of each event (0: not a sample type)
  size_t off_cpu_value = 0, wall_value = 0;
  core::StringId time_key = 0, ns_unit = 0, reason_key = 0, edge_key = 0;
  uint64_t recording_start = 0, recording_end = 0, last_time = 0;
  std::optional<OffCpuSpans> spans;
  // The spans closed since the last batch, with their thread's name then: a switch costs a
  // few words, and samples are built a batch at a time.
  struct ClosedSpan {
    OffCpuSpan span;
    core::StringId comm = 0;
  };
  std::vector<ClosedSpan> closed_spans;
  static constexpr size_t kSpansPerBatch = 65536;
  // --off-cpu with timestamps: a thread's samples differ in their timestamps, so none goes
  // through the merger's hash table. On-CPU samples and closed spans are logged compactly
  // as they come and become the profile's samples once, in finish(), in the order the
  // batches gave them before (a batch of spans whenever kSpansPerBatch had closed): the
  // sample arrays are sized once, not doubled (and their fresh pages zeroed) as they grow.
  bool logged = false;
  struct LoggedSample {
    uint64_t time = 0;
    uint64_t spans_before = 0;  // spans closed when it came
    uint64_t frames_begin = 0;  // in logged_frames
    int64_t period = 0;
    uint32_t frames = 0, pid = 0, tid = 0, cpu = 0;
    core::StringId comm = 0;
    uint32_t value = 0;  // the value index of its event
  };
  std::vector<LoggedSample> logged_samples;
  std::vector<core::LocationId> logged_frames;
  std::vector<std::vector<ClosedSpan>> span_blocks;  // full batches, in order
  uint64_t spans_closed = 0;
  // While finish() adds the log: by thread and kind (on-CPU, off-CPU), the latest
  // timestamp added. A later one makes a sample that equals none before.
  std::unordered_map<uint64_t, uint64_t> latest_timestamp;
  std::array<core::StringId, 6> reason_names{};  // by OffCpuReason
  // Distinct off-CPU stacks: StackId i is stack_pool[stack_ends[i - 1], stack_ends[i]).
  std::vector<core::LocationId> stack_pool;
  std::vector<size_t> stack_ends{0};
  std::unordered_multimap<uint64_t, StackId> stack_index;  // by hash of the locations
  // Switch-out samples seen before, by their raw frames in one address-space generation of
  // their process: the stack and reason without locating or classifying the frames again.
  struct SeenSwitchStack {
    pid_t pid;
    uint64_t generation;
    size_t raw_begin, raw_size;
    StackId stack;
    OffCpuReason reason;
    uint32_t unmapped;
  };
  std::vector<uint64_t> raw_pool;
  std::vector<SeenSwitchStack> seen_switch_stacks;
  std::unordered_multimap<uint64_t, uint32_t> seen_index;  // by hash of pid and raw frames
  // --off-cpu from the BPF recorder: the callers its frame-pointer walk skipped.
  FramelessCallers frameless_callers;
  std::vector<uint64_t> recovered_callers, spliced_frames;
  std::unordered_map<std::string, core::LocationId> marker_locations;
  std::vector<std::string_view> kernel_names;
  // Scratch, reused across samples.
  std::vector<core::LocationId> stack;
  std::vector<int64_t> values;
  std::vector<core::Label> labels;

  explicit State(ProfileBuilderOptions o)
      : options(std::move(o)), sample_stack(options.call_graph, options.kernel_frames) {}

  core::MappingId image_mapping(pid_t pid, const ImageMapping& m, uint64_t generation);
  core::LocationId location(pid_t pid, uint64_t address);
  core::LocationId kernel_location(uint64_t address);
  core::LocationId marker_location(const std::string& name);
  void add_off_cpu_sample(const OffCpuSpan& span, core::StringId comm);
  void add_time_label(uint64_t time);
  StackId intern_stack(std::span<const core::LocationId> located);
  std::span<const core::LocationId> stack_of(StackId id) const {
    return {stack_pool.data() + stack_ends[id - 1], stack_ends[id] - stack_ends[id - 1]};
  }
  void switch_sample(const SampleRecord& sample, std::span<const uint64_t> frames);
  const SeenSwitchStack& switch_stack(pid_t pid, std::span<const uint64_t> frames);
  std::span<const uint64_t> with_frameless_callers(const KernelOffCpuSpan& kernel,
                                                   const AddressSpace* space,
                                                   std::span<const uint64_t> frames);
  const SeenSwitchStack& kernel_span_stack(const KernelOffCpuSpan& kernel);
  // By the recorder's raw stack (KernelOffCpuSpan::raw_stack): the stack it became, for the
  // process and address-space generation it was seen in.
  struct SeenRawStack {
    pid_t pid = 0;
    uint64_t generation = 0;
    uint32_t seen = UINT32_MAX;  // index in seen_switch_stacks
  };
  std::vector<SeenRawStack> seen_raw_stacks;
  void load_kernel_symbols();
  // A stack the BPF program took at sched_switch starts in the program, the tracepoint
  // and __schedule: how many leaf frames to drop so that it starts in schedule's caller,
  // as the context-switches sample's does. By the leaf frames, which repeat.
  static constexpr size_t kSchedulerFramesMax = 6;
  size_t scheduler_frames(std::span<const uint64_t> frames);
  std::map<std::array<uint64_t, kSchedulerFramesMax>, size_t> scheduler_frames_by_leaf;
  void close_span(const OffCpuSpan& span);
  void add_closed_spans();
  void add_built_sample(uint32_t tid, bool off_cpu, uint64_t time);
  void add_logged();
};

StackId ProfileBuilder::State::intern_stack(std::span<const core::LocationId> located) {
  if (located.empty()) return 0;
  uint64_t h = located.size();
  for (core::LocationId id : located) h = core::mix64(h ^ id);
  for (auto [it, end] = stack_index.equal_range(h); it != end; ++it) {
    std::span<const core::LocationId> known = stack_of(it->second);
    if (std::equal(known.begin(), known.end(), located.begin(), located.end())) return it->second;
  }
  stack_pool.insert(stack_pool.end(), located.begin(), located.end());
  stack_ends.push_back(stack_pool.size());
  const auto id = static_cast<StackId>(stack_ends.size() - 1);
  stack_index.emplace(h, id);
  return id;
}

void ProfileBuilder::State::close_span(const OffCpuSpan& span) {
  core::StringId comm = 0;
  if (auto it = comms.find(static_cast<pid_t>(span.tid)); it != comms.end()) comm = it->second;
  closed_spans.push_back({span, comm});
  ++spans_closed;
  if (closed_spans.size() < kSpansPerBatch) return;
  if (logged) {
    // Kept as they are until finish(): a block each, never moved.
    span_blocks.push_back(std::move(closed_spans));
    closed_spans = {};
    closed_spans.reserve(kSpansPerBatch);
    return;
  }
  // In batches, so that the array stays small (2.5 MiB) beside the profile they go to.
  add_closed_spans();
}

void ProfileBuilder::State::add_built_sample(uint32_t tid, bool off_cpu, uint64_t time) {
  if (!logged) {
    merger->add(stack, values, labels);
    return;
  }
  const uint64_t timestamp = time > recording_start ? time - recording_start : 0;
  auto [latest, first] = latest_timestamp.try_emplace(uint64_t(tid) << 1 | off_cpu, timestamp);
  if (first || timestamp > latest->second) {
    latest->second = timestamp;
    profile.add_distinct_sample(stack, values, labels);
  } else {
    // Out of order, or clamped to the recording's start: it may equal an earlier sample,
    // which canonicalize() then merges (as the merger would have).
    profile.add_sample(stack, values, labels);
  }
}

void ProfileBuilder::State::add_logged() {
  const uint64_t spans_total = span_blocks.size() * kSpansPerBatch + closed_spans.size();
  auto logged_span = [&](uint64_t i) -> const ClosedSpan& {
    const uint64_t block = i / kSpansPerBatch;
    return block < span_blocks.size() ? span_blocks[block][i % kSpansPerBatch]
                                      : closed_spans[i % kSpansPerBatch];
  };
  // The arrays' sizes, counted as add_off_cpu_sample and the samples below fill them.
  uint64_t frames = logged_frames.size(), labels_total = 0;
  for (const LoggedSample& l : logged_samples) labels_total += 4 + (l.comm != 0);
  for (uint64_t i = 0; i < spans_total; ++i) {
    const ClosedSpan& c = logged_span(i);
    const bool from_before = c.span.edge == SpanEdge::from_start || c.span.edge == SpanEdge::whole;
    const size_t stack_size = c.span.stack != 0 ? stack_of(c.span.stack).size() : 0;
    frames += stack_size + (stack_size == 0 && !from_before) + from_before;
    labels_total += 4 + (c.comm != 0) + (c.span.edge != SpanEdge::switches);
  }
  profile.reserve_samples(profile.sample_count() + logged_samples.size() + spans_total, frames,
                          labels_total);
  uint64_t next_span = 0;
  auto add_spans_until = [&](uint64_t end) {
    for (; next_span < end; ++next_span) {
      const ClosedSpan& c = logged_span(next_span);
      add_off_cpu_sample(c.span, c.comm);
    }
  };
  for (const LoggedSample& l : logged_samples) {
    add_spans_until(l.spans_before / kSpansPerBatch * kSpansPerBatch);
    stack.assign(logged_frames.begin() + static_cast<std::ptrdiff_t>(l.frames_begin),
                 logged_frames.begin() + static_cast<std::ptrdiff_t>(l.frames_begin + l.frames));
    labels.clear();
    if (l.comm != 0) labels.push_back({.key = comm_key, .str = l.comm});
    labels.push_back({.key = cpu_key, .num = l.cpu});
    labels.push_back({.key = pid_key, .num = l.pid});
    labels.push_back({.key = tid_key, .num = l.tid});
    add_time_label(l.time);
    std::fill(values.begin(), values.end(), 0);
    values[0] = 1;
    values[l.value] = l.period;
    if (l.value == value_of_event[0]) values[wall_value] = l.period;
    add_built_sample(l.tid, false, l.time);
  }
  add_spans_until(spans_total);
  logged_samples = {};
  logged_frames = {};
  span_blocks = {};
  closed_spans = {};
}

void ProfileBuilder::State::add_closed_spans() {
  for (const ClosedSpan& closed : closed_spans) add_off_cpu_sample(closed.span, closed.comm);
  closed_spans.clear();
}

core::LocationId ProfileBuilder::State::marker_location(const std::string& name) {
  auto [it, inserted] = marker_locations.try_emplace(name, 0);
  if (inserted) {
    core::StringId id = profile.intern(name);
    core::FunctionId f = profile.add_function({.name = id, .system_name = id});
    core::Location loc{.mapping = 0, .address = 0, .lines = {}};
    loc.lines.push_back({.function = f});
    it->second = profile.add_location(std::move(loc));
  }
  return it->second;
}

void ProfileBuilder::State::add_time_label(uint64_t time) {
  if (!options.timestamps) return;
  labels.push_back({.key = time_key,
                    .num = static_cast<int64_t>(time > recording_start ? time - recording_start : 0),
                    .num_unit = ns_unit});
}

void ProfileBuilder::State::add_off_cpu_sample(const OffCpuSpan& span, core::StringId comm) {
  ++stats.off_cpu_spans;
  stack.clear();
  if (span.stack != 0) {
    std::span<const core::LocationId> known = stack_of(span.stack);
    stack.assign(known.begin(), known.end());
  }
  if (span.edge != SpanEdge::switches) ++stats.off_cpu_edge;
  const bool from_before = span.edge == SpanEdge::from_start || span.edge == SpanEdge::whole;
  if (stack.empty() && !from_before) {
    ++stats.off_cpu_unstacked;
    stack.push_back(marker_location("[off-CPU, no stack recorded]"));
  }
  // Marked in the stack itself (its root), so that every report shows what is not known:
  // the kernel frames, if any, come from /proc at the start; the user frames are unknown.
  if (from_before) stack.push_back(marker_location("[off-CPU since before the recording began]"));
  // In the order canonicalize() sorts labels into (strings, then numbers, by key name):
  // sorting none of them keeps the samples known distinct.
  labels.clear();
  if (comm != 0) labels.push_back({.key = comm_key, .str = comm});
  if (span.edge != SpanEdge::switches)
    labels.push_back({.key = edge_key, .str = profile.intern(span_edge_name(span.edge))});
  labels.push_back({.key = reason_key, .str = reason_names[static_cast<size_t>(span.reason)]});
  labels.push_back({.key = pid_key, .num = span.pid});
  labels.push_back({.key = tid_key, .num = span.tid});
  add_time_label(span.start);
  std::fill(values.begin(), values.end(), 0);
  values[0] = 1;
  const auto ns = static_cast<int64_t>(span.end - span.start);
  values[off_cpu_value] = ns;
  values[wall_value] = ns;
  add_built_sample(span.tid, true, span.start);
}

core::MappingId ProfileBuilder::State::image_mapping(pid_t pid, const ImageMapping& m,
                                                     uint64_t generation) {
  MappingCache& cache = mapping_cache[pid];
  if (cache.generation != generation) {
    cache.generation = generation;
    cache.by_start.clear();
  }
  if (auto it = cache.by_start.find(m.start); it != cache.by_start.end()) return it->second;
  MappingKey key{m.path, m.build_id, m.start, m.limit, m.pgoff};
  auto [it, inserted] = mapping_ids.try_emplace(key, 0);
  if (inserted)
    it->second = profile.add_mapping({.start = m.start,
                                      .limit = m.limit,
                                      .offset = m.pgoff,
                                      .file = profile.intern(m.path),
                                      .build_id = profile.intern(m.build_id)});
  cache.by_start.emplace(m.start, it->second);
  return it->second;
}

void ProfileBuilder::State::load_kernel_symbols() {
  if (kernel_symbols_loaded) return;
  kernel_symbols_loaded = true;
  if (!options.kallsyms.empty()) kernel_symbols.load(options.kallsyms);
  kernel_mapping = profile.add_mapping({.start = kKernelSpaceStart,
                                        .limit = std::numeric_limits<uint64_t>::max(),
                                        .file = profile.intern("[kernel.kallsyms]"),
                                        .has_functions = !kernel_symbols.empty()});
}

size_t ProfileBuilder::State::scheduler_frames(std::span<const uint64_t> frames) {
  std::array<uint64_t, kSchedulerFramesMax> leaf{};
  const size_t n = std::min(frames.size(), leaf.size());
  std::copy_n(frames.begin(), n, leaf.begin());
  auto [it, added] = scheduler_frames_by_leaf.try_emplace(leaf, 0);
  if (added) {
    load_kernel_symbols();
    for (size_t i = 0; i < n; ++i) {
      if (frames[i] >= kKernelSpaceStart && kernel_symbols.find(frames[i]) == "__schedule") {
        it->second = i + 1;
        break;
      }
    }
  }
  return it->second;
}

core::LocationId ProfileBuilder::State::kernel_location(uint64_t address) {
  load_kernel_symbols();
  LocationKey key{kernel_mapping, address};
  auto [it, inserted] = locations.try_emplace(key, 0);
  if (!inserted) return it->second;
  core::Location loc{.mapping = kernel_mapping, .address = address, .lines = {}};
  if (std::string_view name = kernel_symbols.find(address); !name.empty()) {
    core::StringId id = profile.intern(name);
    auto [f, added] = kernel_functions.try_emplace(id, 0);
    if (added) f->second = profile.add_function({.name = id, .system_name = id});
    loc.lines.push_back({.function = f->second});
  }
  it->second = profile.add_location(std::move(loc));
  return it->second;
}

core::LocationId ProfileBuilder::State::location(pid_t pid, uint64_t address) {
  if (address >= kKernelSpaceStart) return kernel_location(address);
  core::MappingId mapping = 0;
  if (const AddressSpace* space = processes.find(pid)) {
    if (const ImageMapping* m = space->find(address))
      mapping = image_mapping(pid, *m, space->generation());
  }
  if (mapping == 0) ++stats.unmapped_frames;
  LocationKey key{mapping, address};
  auto [it, inserted] = locations.try_emplace(key, 0);
  if (inserted)
    it->second = profile.add_location({.mapping = mapping, .address = address, .lines = {}});
  return it->second;
}

// Where the thread leaves the CPU: the span's stack, and the reason its kernel frames tell
// (a preemption is flagged by the SWITCH record that follows). A thread blocks from a few
// places, again and again: a stack seen before is looked up by its raw frames.
void ProfileBuilder::State::switch_sample(const SampleRecord& sample,
                                          std::span<const uint64_t> frames) {
  const SeenSwitchStack& seen = switch_stack(static_cast<pid_t>(sample.origin.pid), frames);
  spans->switch_sample(sample.origin.pid, sample.origin.tid, seen.stack, seen.reason);
}

const ProfileBuilder::State::SeenSwitchStack& ProfileBuilder::State::switch_stack(
    pid_t pid, std::span<const uint64_t> frames) {
  const AddressSpace* space = processes.find(pid);
  const uint64_t generation = space != nullptr ? space->generation() : 0;
  uint64_t h = core::mix64(uint64_t(uint32_t(pid)) ^ (generation << 32) ^ frames.size());
  for (uint64_t address : frames) h = core::mix64(h ^ address);
  for (auto [it, end] = seen_index.equal_range(h); it != end; ++it) {
    const SeenSwitchStack& seen = seen_switch_stacks[it->second];
    if (seen.pid != pid || seen.generation != generation || seen.raw_size != frames.size() ||
        !std::equal(frames.begin(), frames.end(), raw_pool.begin() + static_cast<std::ptrdiff_t>(seen.raw_begin)))
      continue;
    stats.frames += seen.stack != 0 ? stack_of(seen.stack).size() : 0;
    stats.unmapped_frames += seen.unmapped;
    return seen;
  }
  const uint64_t unmapped_before = stats.unmapped_frames;
  kernel_names.clear();
  for (uint64_t address : frames) {
    if (address < kKernelSpaceStart) continue;
    load_kernel_symbols();
    kernel_names.push_back(kernel_symbols.find(address));
  }
  // A thread taken off the CPU on its way back to user space keeps its user frames only,
  // as the BPF recorder takes them.
  const bool user_frames_only = returning_to_user(kernel_names);
  stack.clear();
  for (uint64_t address : frames)
    if (!user_frames_only || address < kKernelSpaceStart) stack.push_back(location(pid, address));
  stats.frames += stack.size();
  const SeenSwitchStack seen{.pid = pid,
                             .generation = generation,
                             .raw_begin = raw_pool.size(),
                             .raw_size = frames.size(),
                             .stack = intern_stack(stack),
                             .reason = user_frames_only ? OffCpuReason::preempted : classify_blocked(kernel_names),
                             .unmapped = static_cast<uint32_t>(stats.unmapped_frames - unmapped_before)};
  raw_pool.insert(raw_pool.end(), frames.begin(), frames.end());
  seen_index.emplace(h, static_cast<uint32_t>(seen_switch_stacks.size()));
  seen_switch_stacks.push_back(seen);
  return seen_switch_stacks.back();
}

// The stack of a span the BPF program measured: its frames without the scheduler's, with
// the callers its frame-pointer walk skipped. Spans with the same raw stack in one process
// and generation of its maps have the same: that is found by index, not by their frames.
const ProfileBuilder::State::SeenSwitchStack& ProfileBuilder::State::kernel_span_stack(
    const KernelOffCpuSpan& kernel) {
  const auto pid = static_cast<pid_t>(kernel.pid);
  const AddressSpace* space = processes.find(pid);
  const uint64_t generation = space != nullptr ? space->generation() : 0;
  SeenRawStack* memo = nullptr;
  if (kernel.raw_stack != 0) {
    if (kernel.raw_stack >= seen_raw_stacks.size()) seen_raw_stacks.resize(kernel.raw_stack + 1);
    memo = &seen_raw_stacks[kernel.raw_stack];
    if (memo->seen != UINT32_MAX && memo->pid == pid && memo->generation == generation) {
      const SeenSwitchStack& seen = seen_switch_stacks[memo->seen];
      stats.frames += seen.stack != 0 ? stack_of(seen.stack).size() : 0;
      stats.unmapped_frames += seen.unmapped;
      return seen;
    }
  }
  std::span<const uint64_t> frames = kernel.frames.subspan(scheduler_frames(kernel.frames));
  const SeenSwitchStack& seen = switch_stack(pid, with_frameless_callers(kernel, space, frames));
  if (memo != nullptr)
    *memo = {.pid = pid, .generation = generation,
             .seen = static_cast<uint32_t>(&seen - seen_switch_stacks.data())};
  return seen;
}

// The span's frames (kernel, then user) with the callers of a frameless leaf, which the
// kernel's frame-pointer walk skipped, found in the words copied from the user stack.
std::span<const uint64_t> ProfileBuilder::State::with_frameless_callers(
    const KernelOffCpuSpan& kernel, const AddressSpace* space, std::span<const uint64_t> frames) {
  if (kernel.user_words.empty() || space == nullptr) return frames;
  const auto user = std::find_if(frames.begin(), frames.end(),
                                 [](uint64_t address) { return address < kKernelSpaceStart; });
  if (user == frames.end()) return frames;
  recovered_callers.clear();
  frameless_callers.recover(static_cast<pid_t>(kernel.pid), *space, *user, kernel.user_words,
                            recovered_callers);
  if (recovered_callers.empty()) return frames;
  spliced_frames.assign(frames.begin(), user);
  FramelessCallers::splice(std::span<const uint64_t>(user, frames.end()), recovered_callers, spliced_frames);
  return spliced_frames;
}

ProfileBuilder::ProfileBuilder(ProfileBuilderOptions options)
    : state_(std::make_unique<State>(std::move(options))) {
  State& s = *state_;
  s.main_pid = s.options.main_pid;
  core::Profile& p = s.profile;
  // "samples" first (the count the reports' confidence intervals and the one-value formats
  // need), then one type per event, the first event the default.
  p.sample_types.push_back(p.value_type("samples", "count"));
  for (size_t i = 0; i < s.options.events.size(); ++i) {
    const EventSpec& e = s.options.events[i];
    if (s.options.off_cpu && i == s.options.switch_event) {
      s.value_of_event.push_back(0);
      continue;
    }
    s.value_of_event.push_back(p.sample_types.size());
    // --off-cpu: the first event counts on-CPU time, beside off-cpu and wall.
    std::string_view name = s.options.off_cpu && i == 0 ? std::string_view("cpu") : e.name;
    p.sample_types.push_back(p.value_type(name, e.unit()));
  }
  if (!s.options.events.empty()) {
    p.period_type = p.sample_types[1];
    p.default_sample_type = p.sample_types[1].type;
  }
  if (s.options.off_cpu) {
    s.off_cpu_value = p.sample_types.size();
    p.sample_types.push_back(p.value_type("off-cpu", "nanoseconds"));
    s.wall_value = p.sample_types.size();
    p.sample_types.push_back(p.value_type("wall", "nanoseconds"));
    p.default_sample_type = p.sample_types[s.wall_value].type;
    s.time_key = p.intern("timestamp");
    s.ns_unit = p.intern("nanoseconds");
    s.reason_key = p.intern("reason");
    s.edge_key = p.intern("off_cpu_span");
    for (size_t r = 0; r < s.reason_names.size(); ++r)
      s.reason_names[r] = p.intern(off_cpu_reason_name(static_cast<OffCpuReason>(r)));
    s.spans.emplace(0);
  }
  p.period = s.options.period;
  s.pid_key = p.intern("pid");
  s.tid_key = p.intern("tid");
  s.comm_key = p.intern("comm");
  s.cpu_key = p.intern("cpu");
  s.values.assign(p.sample_types.size(), 0);
  s.logged = s.options.off_cpu && s.options.timestamps;
  if (s.logged) s.closed_spans.reserve(State::kSpansPerBatch);
  else s.merger.emplace(p);
}

ProfileBuilder::~ProfileBuilder() = default;

const ProfileBuilderStats& ProfileBuilder::stats() const { return state_->stats; }

void ProfileBuilder::on_sample(const SampleRecord& sample) {
  State& s = *state_;
  if (sample.event >= s.value_of_event.size()) return;
  const bool switch_sample = s.options.off_cpu && sample.event == s.options.switch_event;
  s.last_time = std::max(s.last_time, sample.origin.time);
  auto pid = static_cast<pid_t>(sample.origin.pid);
  if (s.main_pid == 0) s.main_pid = pid;
  ++s.stats.samples;
  if (sample.in_kernel()) ++s.stats.kernel_samples;

  const UnwindStats before = s.sample_stack.unwind_stats();
  const std::span<const uint64_t> frames = s.sample_stack.frames(sample, s.processes);
  const UnwindStats after = s.sample_stack.unwind_stats();
  if (after.truncated != before.truncated) ++s.stats.unwind_truncated;
  if (after.stack_ended != before.stack_ended) ++s.stats.stack_copy_full;
  if (switch_sample) {
    s.switch_sample(sample, frames);
    return;
  }
  s.stack.clear();
  for (uint64_t address : frames) s.stack.push_back(s.location(pid, address));
  s.stats.frames += s.stack.size();
  const size_t value = s.value_of_event[sample.event];
  const auto period = static_cast<int64_t>(
      std::min<uint64_t>(sample.period, uint64_t(std::numeric_limits<int64_t>::max())));
  if (s.logged) {
    State::LoggedSample logged{.time = sample.origin.time,
                               .spans_before = s.spans_closed,
                               .frames_begin = s.logged_frames.size(),
                               .period = period,
                               .frames = static_cast<uint32_t>(s.stack.size()),
                               .pid = sample.origin.pid,
                               .tid = sample.origin.tid,
                               .cpu = sample.origin.cpu,
                               .value = static_cast<uint32_t>(value)};
    if (auto it = s.comms.find(static_cast<pid_t>(sample.origin.tid)); it != s.comms.end())
      logged.comm = it->second;
    s.logged_frames.insert(s.logged_frames.end(), s.stack.begin(), s.stack.end());
    s.logged_samples.push_back(logged);
    return;
  }

  s.labels.clear();
  if (auto it = s.comms.find(static_cast<pid_t>(sample.origin.tid)); it != s.comms.end())
    s.labels.push_back({.key = s.comm_key, .str = it->second});
  s.labels.push_back({.key = s.cpu_key, .num = sample.origin.cpu});
  s.labels.push_back({.key = s.pid_key, .num = sample.origin.pid});
  s.labels.push_back({.key = s.tid_key, .num = sample.origin.tid});
  if (s.options.off_cpu) s.add_time_label(sample.origin.time);

  std::fill(s.values.begin(), s.values.end(), 0);
  s.values[0] = 1;
  s.values[value] = period;
  if (s.options.off_cpu && sample.event == 0) s.values[s.wall_value] = s.values[value];
  s.merger->add(s.stack, s.values, s.labels);
}

void ProfileBuilder::on_mmap(const MmapRecord& m) {
  std::optional<ImageMapping> mapping = executable_mapping(m);
  if (!mapping) return;
  State& s = *state_;
  auto pid = static_cast<pid_t>(m.pid);
  if (s.main_pid == 0) s.main_pid = pid;
  if (pid == s.main_pid && s.main_path.empty() && !mapping->path.empty() && mapping->path[0] != '[')
    s.main_path = mapping->path;
  s.processes.process(pid).add(*mapping);
}

void ProfileBuilder::on_comm(const CommRecord& c) {
  State& s = *state_;
  if (c.exec) {
    s.processes.exec(static_cast<pid_t>(c.pid));
    if (static_cast<pid_t>(c.pid) == s.main_pid) s.main_path.clear();
  }
  s.comms[static_cast<pid_t>(c.tid)] = s.profile.intern(c.comm);
  // Time 0: made from /proc for a thread that ran before the recording (-p).
  if (s.spans && c.origin.time == 0 && !s.options.kernel_spans) {
    // Where it waits now, if it waits: from /proc (root only), by name.
    std::vector<core::LocationId> stack;
    std::vector<std::string> names = proc_kernel_stack(static_cast<int>(c.pid), static_cast<int>(c.tid));
    std::vector<std::string_view> views(names.begin(), names.end());
    for (const std::string& name : names) stack.push_back(s.marker_location(name));
    s.spans->thread_at_start(c.pid, c.tid, s.intern_stack(stack), classify_blocked(views));
  }
}

void ProfileBuilder::on_fork(const TaskRecord& f) {
  State& s = *state_;
  if (f.pid != f.ppid) s.processes.fork(static_cast<pid_t>(f.ppid), static_cast<pid_t>(f.pid));
  if (auto it = s.comms.find(static_cast<pid_t>(f.ptid)); it != s.comms.end())
    s.comms[static_cast<pid_t>(f.tid)] = it->second;
}

void ProfileBuilder::on_exit(const TaskRecord& e) {
  State& s = *state_;
  // The maps stay (samples of the process may still be in another ring); the unwinder's
  // per-process state goes.
  if (e.pid == e.tid) s.sample_stack.forget(static_cast<pid_t>(e.pid));
  if (s.spans) s.spans->thread_exit(e.tid);
}

void ProfileBuilder::on_switch(const SwitchRecord& record) {
  State& s = *state_;
  if (!s.spans) return;
  s.last_time = std::max(s.last_time, record.origin.time);
  if (auto span = s.spans->switch_record(record)) s.close_span(*span);
}

void ProfileBuilder::on_kernel_span(const KernelOffCpuSpan& kernel) {
  State& s = *state_;
  if (!s.spans) return;
  OffCpuSpan span{.pid = kernel.pid, .tid = kernel.tid, .start = kernel.start, .end = kernel.end};
  if (kernel.to_end) {
    span.end = std::max(kernel.start, s.recording_end ? s.recording_end : s.last_time);
    span.edge = SpanEdge::to_end;
  }
  if (!kernel.frames.empty()) {
    const auto& seen = s.kernel_span_stack(kernel);
    span.stack = seen.stack;
    span.reason = seen.reason;
  }
  if (kernel.preempted) span.reason = OffCpuReason::preempted;
  s.close_span(span);
}

void ProfileBuilder::recording_started(uint64_t monotonic_ns) {
  State& s = *state_;
  s.recording_start = monotonic_ns;
  if (s.spans) s.spans.emplace(monotonic_ns);
}

void ProfileBuilder::recording_ended(uint64_t monotonic_ns) { state_->recording_end = monotonic_ns; }

core::Profile ProfileBuilder::finish() {
  State& s = *state_;
  if (s.spans) {
    for (const OffCpuSpan& span : s.spans->finish(s.recording_end ? s.recording_end : s.last_time))
      s.close_span(span);
    if (s.logged) s.add_logged();
    else s.add_closed_spans();
  }
  s.merger.reset();
  core::Profile& p = s.profile;
  // pprof takes mapping 1 for the main binary: move the target's executable there.
  core::MappingId main_mapping = 0;
  for (size_t i = 0; i < p.mappings.size() && main_mapping == 0; ++i)
    if (!s.main_path.empty() && p.str(p.mappings[i].file) == s.main_path)
      main_mapping = static_cast<core::MappingId>(i + 1);
  if (main_mapping > 1) {
    const core::MappingId a = 1, b = main_mapping;
    std::swap(p.mappings[a - 1], p.mappings[b - 1]);
    for (core::Location& l : p.locations) {
      if (l.mapping == a) l.mapping = b;
      else if (l.mapping == b) l.mapping = a;
    }
  }
  p.canonicalize();
  return std::move(p);
}

}  // namespace tally::collect
