#include "collect/profile_builder.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "collect/kernel_symbols.h"
#include "collect/process_maps.h"
#include "collect/sample_stack.h"
#include "core/hash.h"
#include "core/sample_merger.h"

namespace tally::collect {

namespace {

// The kernel's half of the x86-64 address space.
constexpr uint64_t kKernelStart = 0xffff800000000000ULL;

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
  // Scratch, reused across samples.
  std::vector<core::LocationId> stack;
  std::vector<int64_t> values;
  std::vector<core::Label> labels;

  explicit State(ProfileBuilderOptions o)
      : options(std::move(o)), sample_stack(options.call_graph, options.kernel_frames) {}

  core::MappingId image_mapping(pid_t pid, const ImageMapping& m, uint64_t generation);
  core::LocationId location(pid_t pid, uint64_t address);
  core::LocationId kernel_location(uint64_t address);
};

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

core::LocationId ProfileBuilder::State::kernel_location(uint64_t address) {
  if (!kernel_symbols_loaded) {
    kernel_symbols_loaded = true;
    if (!options.kallsyms.empty()) kernel_symbols.load(options.kallsyms);
    kernel_mapping = profile.add_mapping({.start = kKernelStart,
                                          .limit = std::numeric_limits<uint64_t>::max(),
                                          .file = profile.intern("[kernel.kallsyms]"),
                                          .has_functions = !kernel_symbols.empty()});
  }
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
  if (address >= kKernelStart) return kernel_location(address);
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

ProfileBuilder::ProfileBuilder(ProfileBuilderOptions options)
    : state_(std::make_unique<State>(std::move(options))) {
  State& s = *state_;
  s.main_pid = s.options.main_pid;
  core::Profile& p = s.profile;
  // "samples" first (the count the reports' confidence intervals and the one-value formats
  // need), then one type per event, the first event the default.
  p.sample_types.push_back(p.value_type("samples", "count"));
  for (const EventSpec& e : s.options.events) p.sample_types.push_back(p.value_type(e.name, e.unit()));
  if (!s.options.events.empty()) {
    p.period_type = p.sample_types[1];
    p.default_sample_type = p.sample_types[1].type;
  }
  p.period = s.options.period;
  s.pid_key = p.intern("pid");
  s.tid_key = p.intern("tid");
  s.comm_key = p.intern("comm");
  s.cpu_key = p.intern("cpu");
  s.values.assign(p.sample_types.size(), 0);
  s.merger.emplace(p);
}

ProfileBuilder::~ProfileBuilder() = default;

const ProfileBuilderStats& ProfileBuilder::stats() const { return state_->stats; }

void ProfileBuilder::on_sample(const SampleRecord& sample) {
  State& s = *state_;
  if (sample.event + 1 >= s.values.size()) return;
  auto pid = static_cast<pid_t>(sample.origin.pid);
  if (s.main_pid == 0) s.main_pid = pid;
  ++s.stats.samples;
  if (sample.in_kernel()) ++s.stats.kernel_samples;

  const UnwindStats before = s.sample_stack.unwind_stats();
  const std::span<const uint64_t> frames = s.sample_stack.frames(sample, s.processes);
  const UnwindStats after = s.sample_stack.unwind_stats();
  if (after.truncated != before.truncated) ++s.stats.unwind_truncated;
  if (after.stack_ended != before.stack_ended) ++s.stats.stack_copy_full;
  s.stack.clear();
  for (uint64_t address : frames) s.stack.push_back(s.location(pid, address));
  s.stats.frames += s.stack.size();

  s.labels.clear();
  if (auto it = s.comms.find(static_cast<pid_t>(sample.origin.tid)); it != s.comms.end())
    s.labels.push_back({.key = s.comm_key, .str = it->second});
  s.labels.push_back({.key = s.cpu_key, .num = sample.origin.cpu});
  s.labels.push_back({.key = s.pid_key, .num = sample.origin.pid});
  s.labels.push_back({.key = s.tid_key, .num = sample.origin.tid});

  std::fill(s.values.begin(), s.values.end(), 0);
  s.values[0] = 1;
  s.values[sample.event + 1] = static_cast<int64_t>(
      std::min<uint64_t>(sample.period, uint64_t(std::numeric_limits<int64_t>::max())));
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
}

core::Profile ProfileBuilder::finish() {
  State& s = *state_;
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
