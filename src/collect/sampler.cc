#include "collect/sampler.h"

#include <linux/perf_event.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "collect/cpu_topology.h"
#include "collect/file_build_ids.h"
#include "collect/proc_tasks.h"
#include "collect/process_maps.h"
#include "collect/ring_buffer.h"
#include "collect/trace_clock.h"

namespace tally::collect {

namespace {

// Records newer than this before the start of a read are held for the next one: a record
// another CPU stamped just before may not be visible in its ring yet.
constexpr uint64_t kHoldBackNs = 2'000'000;
// Attaching to -p threads is repeated until a listing of /proc/PID/task shows no thread
// that is neither attached nor followed by inheritance (bounded, for a process that
// creates threads faster than we attach).
constexpr int kMaxAttachPasses = 16;

size_t floor_pow2(size_t n) {
  size_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

size_t read_mlock_kb() {
  std::ifstream in("/proc/sys/kernel/perf_event_mlock_kb");
  size_t kb = 516;
  in >> kb;
  return kb;
}

// Data pages per ring: what was asked, or by call-graph mode; without privileges, what
// the kernel's perf_event_mlock_kb lets every CPU have.
size_t ring_pages(const SamplerConfig& config, size_t rings) {
  size_t pages = config.ring_pages;
  if (pages == 0) pages = config.sampling.call_graph == CallGraphMode::dwarf ? 1024 : 128;
  pages = floor_pow2(std::max<size_t>(pages, 1));
  if (geteuid() != 0) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t budget = read_mlock_kb() * 1024 / page / std::max<size_t>(rings, 1);
    if (budget >= 2) pages = std::min(pages, floor_pow2(budget - 1));
  }
  return pages;
}

}  // namespace

struct Sampler::State {
  SamplerConfig config;
  std::vector<perf_event_attr> attrs;  // per event; event 0 asks for the side-band records
  RecordLayout layout;
  std::vector<int> cpus;
  size_t pages = 0;
  std::vector<RingBuffer> rings;  // rings[i] collects every event of cpus[i]
  std::vector<pollfd> pollfds;
  // Every fd, by the thread it was opened for (-1 for system_wide; the child for a command).
  std::unordered_map<pid_t, std::vector<PerfEventFd>> fds;
  std::set<pid_t> ring_owners;            // threads whose fds own a ring: never closed
  std::set<pid_t> attached_late;          // -p threads attached after the first pass
  std::set<pid_t> followed;               // threads the kernel follows by inheritance (FORK seen)
  std::unordered_map<uint64_t, size_t> event_of_id;
  RecordBuffer held;  // read, not yet delivered
  FileBuildIds build_ids;  // MMAP2 carries none (perf_open.cc): read from the mapped files
  SamplerStats stats;
  std::string kernel_excluded;
  bool synthesized = false;

  core::Status open_all();
  core::Status attach(pid_t pid, bool required);
  core::Status attach_processes();
  void note_forks(size_t first_record);
  void read_rings();
  void deliver(SampleConsumer& consumer, uint64_t cutoff);
  void dispatch(std::span<const uint8_t> bytes, SampleConsumer& consumer);
  void synthesize(SampleConsumer& consumer);
  void close_duplicate(pid_t tid);
};

core::Status Sampler::State::attach(pid_t pid, bool required) {
  std::vector<PerfEventFd> opened;
  for (size_t c = 0; c < cpus.size(); ++c) {
    for (size_t e = 0; e < config.events.size(); ++e) {
      auto fd = open_event(attrs[e], config.events[e], pid, cpus[c]);
      // The first event that cannot look at the kernel (perf_event_paranoid, no
      // CAP_PERFMON) is tried again for user space only, unless the user asked for the
      // kernel explicitly (:k): kernel frames are then dropped, with one note.
      if (!fd && stats.events_opened == 0 && !attrs[e].exclude_kernel &&
          !config.events[e].exclude_user && fd.error().kind == core::ErrorKind::unsupported &&
          !config.events[e].needs_pmu()) {
        perf_event_attr user_only = attrs[e];
        user_only.exclude_kernel = 1;
        auto retry = open_event(user_only, config.events[e], pid, cpus[c]);
        if (retry) {
          kernel_excluded = fd.error().message;
          for (auto& a : attrs) a.exclude_kernel = 1;
          fd = std::move(retry);
        }
      }
      if (!fd) {
        // A thread that exited while we attached is no error (what was opened is kept:
        // it may own a ring already).
        if (!required && !process_running(pid)) {
          for (auto& o : opened) fds[pid].push_back(std::move(o));
          return core::ok();
        }
        return fd.error();
      }
      uint64_t id = 0;
      if (ioctl(fd->get(), PERF_EVENT_IOC_ID, &id) == 0) event_of_id[id] = e;
      if (c < rings.size()) {
        if (ioctl(fd->get(), PERF_EVENT_IOC_SET_OUTPUT, rings[c].fd()) != 0)
          return core::Error{fmt::format("cannot share the ring buffer of CPU {}: {}", cpus[c],
                                         std::strerror(errno)),
                             core::ErrorKind::io};
      } else {
        auto ring = RingBuffer::map(fd->get(), pages);
        if (!ring) return ring.error();
        rings.push_back(std::move(*ring));
        pollfds.push_back({.fd = fd->get(), .events = POLLIN, .revents = 0});
        ring_owners.insert(pid);
        ++stats.rings;
      }
      ++stats.events_opened;
      opened.push_back(std::move(*fd));
    }
  }
  auto& slot = fds[pid];
  for (auto& fd : opened) slot.push_back(std::move(fd));
  ++stats.threads_attached;
  return core::ok();
}

void Sampler::State::close_duplicate(pid_t tid) {
  if (!attached_late.count(tid) || ring_owners.count(tid)) return;
  // Followed twice (inherited and attached): keep the inherited counters.
  fds.erase(tid);
  attached_late.erase(tid);
}

void Sampler::State::note_forks(size_t first_record) {
  for (size_t i = first_record; i < held.records.size(); ++i) {
    auto bytes = held.bytes(held.records[i]);
    perf_event_header h;
    std::memcpy(&h, bytes.data(), sizeof h);
    if (h.type != PERF_RECORD_FORK) continue;
    auto rec = decode_record(bytes, layout);
    if (!rec) continue;
    const auto& task = std::get<TaskRecord>(*rec);
    followed.insert(static_cast<pid_t>(task.tid));
    close_duplicate(static_cast<pid_t>(task.tid));
  }
}

core::Status Sampler::State::attach_processes() {
  for (pid_t pid : config.pids)
    if (!process_running(pid))
      return core::Error{fmt::format("process {} does not exist", pid), core::ErrorKind::io};
  std::set<pid_t> attached;
  for (int pass = 0; pass < kMaxAttachPasses; ++pass) {
    bool any = false;
    for (pid_t pid : config.pids) {
      for (pid_t tid : list_threads(pid)) {
        if (attached.count(tid) || followed.count(tid)) continue;
        // The process's own pid must work; its threads may exit under us.
        if (auto st = attach(tid, pass == 0 && tid == pid); !st) return st;
        attached.insert(tid);
        if (pass > 0) attached_late.insert(tid);
        any = true;
      }
    }
    if (!any) break;
    // FORK records say which new threads the kernel follows already.
    size_t before = held.records.size();
    read_rings();
    note_forks(before);
  }
  return core::ok();
}

core::Status Sampler::State::open_all() {
  cpus = config.cpus.empty() ? online_cpus() : config.cpus;
  SamplingOptions sampling = config.sampling;
  sampling.inherit = config.target != TargetKind::system_wide;
  sampling.enable_on_exec = config.target == TargetKind::command;
  pages = ring_pages(config, cpus.size());
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  sampling.wakeup_bytes = static_cast<uint32_t>(std::min<size_t>(pages * page / 4, 1u << 30));
  for (size_t e = 0; e < config.events.size(); ++e) {
    sampling.with_mmap_records = e == 0;
    SamplingOptions event_sampling = sampling;
    if (e < config.periods.size() && config.periods[e] != 0) event_sampling.period = config.periods[e];
    if (e < config.stack_bytes.size() && config.stack_bytes[e] != 0)
      event_sampling.stack_bytes = config.stack_bytes[e];
    perf_event_attr attr = sampling_attr(config.events[e], event_sampling);
    // One clock for every CPU's records, comparable with clock_gettime: what orders them.
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    // Processes and the whole machine are counted from the moment each fd opens, so that
    // FORK records of threads created while attaching are seen (see attach_processes).
    if (config.target != TargetKind::command) attr.disabled = 0;
    if (static_cast<int>(e) == config.context_switch_event) attr.context_switch = 1;
    attrs.push_back(attr);
  }
  layout = {.sample_type = attrs[0].sample_type,
            .sample_regs_user = attrs[0].sample_regs_user,
            .sample_id_all = attrs[0].sample_id_all != 0,
            .mmap_build_ids = attrs[0].build_id != 0};
  switch (config.target) {
    case TargetKind::command:
      if (config.pids.size() != 1)
        return core::Error{"a command target needs exactly one pid", core::ErrorKind::invalid_input};
      return attach(config.pids[0], true);
    case TargetKind::processes: return attach_processes();
    case TargetKind::system_wide: return attach(-1, true);
  }
  return core::ok();
}

void Sampler::State::read_rings() {
  for (size_t i = 0; i < rings.size(); ++i) {
    RingReadResult r = rings[i].read(static_cast<uint32_t>(i), held);
    stats.bytes += r.bytes;
    if (r.bad_bytes) ++stats.bad_records;
  }
}

void Sampler::State::dispatch(std::span<const uint8_t> bytes, SampleConsumer& consumer) {
  auto rec = decode_record(bytes, layout);
  if (!rec) {
    ++stats.bad_records;
    return;
  }
  if (auto* s = std::get_if<SampleRecord>(&*rec)) {
    if (config.events.size() > 1) {
      auto it = event_of_id.find(s->origin.id);
      if (it == event_of_id.end()) {
        ++stats.bad_records;
        return;
      }
      s->event = it->second;
    }
    ++stats.samples;
    consumer.on_sample(*s);
  } else if (auto* m = std::get_if<MmapRecord>(&*rec)) {
    if (m->executable() && m->build_id.empty()) {
      m->build_id = build_ids.of(*m);
      stats.build_id_files = build_ids.stats().files_read;
    }
    consumer.on_mmap(*m);
  } else if (auto* c = std::get_if<CommRecord>(&*rec)) {
    consumer.on_comm(*c);
  } else if (auto* t = std::get_if<TaskRecord>(&*rec)) {
    if (t->exit) {
      consumer.on_exit(*t);
    } else {
      followed.insert(static_cast<pid_t>(t->tid));
      close_duplicate(static_cast<pid_t>(t->tid));
      consumer.on_fork(*t);
    }
  } else if (auto* l = std::get_if<LostRecord>(&*rec)) {
    stats.lost += l->lost;
    consumer.on_lost(*l);
  } else if (auto* th = std::get_if<ThrottleRecord>(&*rec)) {
    if (th->throttled) ++stats.throttled;
    consumer.on_throttle(*th);
  } else if (auto* ls = std::get_if<LostSamplesRecord>(&*rec)) {
    stats.lost_samples += ls->lost;
    consumer.on_lost_samples(*ls);
  } else if (auto* sw = std::get_if<SwitchRecord>(&*rec)) {
    ++stats.switches;
    consumer.on_switch(*sw);
  }
}

void Sampler::State::deliver(SampleConsumer& consumer, uint64_t cutoff) {
  // One ring is in time order already; several are merged by time.
  if (rings.size() <= 1) cutoff = std::numeric_limits<uint64_t>::max();
  struct Entry {
    uint64_t time;
    uint32_t index;
  };
  std::vector<Entry> order;
  order.reserve(held.records.size());
  for (size_t i = 0; i < held.records.size(); ++i)
    order.push_back({record_time(held.bytes(held.records[i]), layout), static_cast<uint32_t>(i)});
  std::stable_sort(order.begin(), order.end(),
                   [](const Entry& a, const Entry& b) { return a.time < b.time; });
  RecordBuffer later;
  for (const Entry& e : order) {
    const auto& ref = held.records[e.index];
    if (e.time <= cutoff) {
      dispatch(held.bytes(ref), consumer);
      continue;
    }
    auto bytes = held.bytes(ref);
    size_t word = later.words.size();
    later.words.insert(later.words.end(), held.words.begin() + static_cast<ptrdiff_t>(ref.word),
                       held.words.begin() + static_cast<ptrdiff_t>(ref.word + bytes.size() / 8));
    later.records.push_back({.word = word, .size = ref.size, .ring = ref.ring});
  }
  held = std::move(later);
}

void Sampler::State::synthesize(SampleConsumer& consumer) {
  synthesized = true;
  if (!config.synthesize_existing || config.target == TargetKind::command) return;
  std::vector<pid_t> pids =
      config.target == TargetKind::system_wide ? list_processes() : config.pids;
  for (pid_t pid : pids) {
    for (pid_t tid : list_threads(pid)) {
      std::string comm = read_comm(pid, tid);
      if (comm.empty()) continue;
      CommRecord c;
      c.pid = c.origin.pid = static_cast<uint32_t>(pid);
      c.tid = c.origin.tid = static_cast<uint32_t>(tid);
      c.comm = comm;
      consumer.on_comm(c);
    }
    ProcessTable table;
    if (!table.load_proc_maps(pid)) continue;
    for (const ImageMapping* mapping : table.process(pid).all()) {
      if (!mapping->executable) continue;
      MmapRecord m;
      m.pid = m.tid = m.origin.pid = m.origin.tid = static_cast<uint32_t>(pid);
      m.start = mapping->start;
      m.length = mapping->limit - mapping->start;
      m.pgoff = mapping->pgoff;
      m.dev_major = mapping->dev_major;
      m.dev_minor = mapping->dev_minor;
      m.inode = mapping->inode;
      m.prot = PROT_READ | PROT_EXEC;
      m.filename = mapping->path;
      m.build_id = build_ids.of(m);
      consumer.on_mmap(m);
    }
  }
}

core::Expected<std::unique_ptr<Sampler>> Sampler::open(const SamplerConfig& config) {
  if (config.events.empty())
    return core::Error{"no event to sample", core::ErrorKind::invalid_input};
  auto state = std::make_unique<State>();
  state->config = config;
  if (auto st = state->open_all(); !st) return st.error();
  return std::unique_ptr<Sampler>(new Sampler(std::move(state)));
}

Sampler::Sampler(std::unique_ptr<State> state) : state_(std::move(state)) {}
Sampler::~Sampler() = default;

core::Status Sampler::enable() {
  for (auto& [tid, fds] : state_->fds)
    for (auto& fd : fds)
      if (ioctl(fd.get(), PERF_EVENT_IOC_ENABLE, 0) != 0)
        return core::Error{fmt::format("cannot enable the counters: {}", std::strerror(errno)),
                           core::ErrorKind::io};
  return core::ok();
}

void Sampler::disable() {
  for (auto& [tid, fds] : state_->fds)
    for (auto& fd : fds) ioctl(fd.get(), PERF_EVENT_IOC_DISABLE, 0);
}

core::Status Sampler::read(SampleConsumer& consumer, int timeout_ms) {
  State& s = *state_;
  if (!s.synthesized) s.synthesize(consumer);
  if (timeout_ms != 0) {
    int n = ::poll(s.pollfds.data(), s.pollfds.size(), timeout_ms);
    if (n > 0) {
      // A ring whose task has exited polls as hung up forever: stop polling it (its
      // records, and those of the threads that inherited from it, are still read).
      for (pollfd& p : s.pollfds)
        if (p.revents & (POLLHUP | POLLERR)) p.fd = -1;
    }
  }
  uint64_t start = monotonic_ns();
  s.read_rings();
  s.deliver(consumer, start > kHoldBackNs ? start - kHoldBackNs : 0);
  return core::ok();
}

core::Status Sampler::drain(SampleConsumer& consumer) {
  State& s = *state_;
  if (!s.synthesized) s.synthesize(consumer);
  s.read_rings();
  s.deliver(consumer, std::numeric_limits<uint64_t>::max());
  return core::ok();
}

const SamplerStats& Sampler::stats() const { return state_->stats; }
const SamplerConfig& Sampler::config() const { return state_->config; }
const perf_event_attr& Sampler::attr(size_t event) const { return state_->attrs.at(event); }
const std::string& Sampler::kernel_excluded() const { return state_->kernel_excluded; }

}  // namespace tally::collect
