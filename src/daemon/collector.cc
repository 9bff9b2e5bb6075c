#include "daemon/collector.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <span>

#include "collect/kernel_symbols.h"
#include "daemon/push_interval.h"
#include "store/image_id.h"
#include "symbolize/elf_image.h"

namespace tally::daemon {

namespace {

// Where the kernel's text is when /proc/kallsyms hides _text: below every kernel and
// module address, within 2 GiB of them all.
constexpr uint64_t kKernelTextFallback = 0xffffffff80000000ULL;
// Deeper stacks are cut (the kernel's own limit, perf_event_max_stack, is 127).
constexpr size_t kMaxFrames = 128;

bool is_pseudo(std::string_view path) { return path.empty() || path.front() == '['; }

// The build id of the file a process has mapped, and its size and mtime, when one of the
// ways to reach it still leads to the same inode.
void read_file_identity(pid_t pid, const collect::ImageMapping& m, store::ImageKey& key) {
  const std::string candidates[] = {
      fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, m.start, m.limit),
      fmt::format("/proc/{}/root{}", pid, m.path), m.path};
  for (const std::string& path : candidates) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (m.inode != 0 && st.st_ino != m.inode) continue;  // another file by now
    key.size = static_cast<uint64_t>(st.st_size);
    key.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    if (key.inode == 0) key.inode = st.st_ino;
    if (key.build_id.empty())
      if (auto elf = symbolize::ElfImage::open(path)) key.build_id = elf->build_id();
    return;
  }
}

}  // namespace

Collector::Collector(store::Aggregate& aggregate, collect::CallGraphMode call_graph)
    : aggregate_(aggregate), sample_stack_(call_graph) {}

Collector::~Collector() = default;

uint32_t Collector::image_of(pid_t pid, const collect::ImageMapping& m) {
  std::string identity = fmt::format("{}\n{}\n{}:{}:{}", m.path, m.build_id, m.dev_major,
                                     m.dev_minor, m.inode);
  auto it = images_.find(identity);
  if (it != images_.end()) return it->second;
  store::ImageKey key{.path = m.path.empty() ? "[anon]" : m.path, .build_id = m.build_id,
                      .dev_major = m.dev_major, .dev_minor = m.dev_minor, .inode = m.inode};
  // The kernel gives a build id or a device and inode: read the build id from the file
  // when it did not, so that one file is one image however it was first seen.
  if (!is_pseudo(m.path) && m.path.front() == '/') read_file_identity(pid, m, key);
  if (!store::is_image_id(key.build_id)) key.build_id.clear();
  const store::IndexEntry entry{store::image_id(key), key};
  const uint32_t image = aggregate_.image(entry, 0, m.pgoff + (m.limit - m.start));
  images_.emplace(std::move(identity), image);
  return image;
}

store::Frame Collector::kernel_frame(uint64_t address) {
  if (kernel_image_ < 0) {
    if (kernel_start_ == 0) kernel_start_ = collect::kernel_text_start();
    if (kernel_start_ == 0) kernel_start_ = kKernelTextFallback;
    store::ImageKey key{.path = "[kernel.kallsyms]", .build_id = collect::kernel_build_id()};
    kernel_image_ = aggregate_.image({store::image_id(key), key}, kernel_start_, 0);
  }
  const uint32_t image = static_cast<uint32_t>(kernel_image_);
  if (address < kernel_start_ || address - kernel_start_ > UINT32_MAX)
    return {image, UINT32_MAX};  // marked as dropped by the caller
  return {image, static_cast<uint32_t>(address - kernel_start_)};
}

store::Frame Collector::user_frame(pid_t pid, uint64_t address) {
  const collect::AddressSpace* space = processes_.find(pid);
  const collect::ImageMapping* m = space ? space->find(address) : nullptr;
  if (m == nullptr) {
    ++stats_.unmapped_frames;
    if (unknown_image_ < 0) {
      store::ImageKey key{.path = "[unknown]"};
      unknown_image_ = aggregate_.image({store::image_id(key), key}, 0, 1);
    }
    return {static_cast<uint32_t>(unknown_image_), 0};
  }
  const uint64_t offset = address - m->start + m->pgoff;
  return {image_of(pid, *m), offset >= UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(offset)};
}

void Collector::on_sample(const collect::SampleRecord& sample) {
  ++stats_.samples;
  const auto pid = static_cast<pid_t>(sample.origin.pid);
  if (sample.in_kernel()) ++stats_.kernel_samples;

  std::span<const uint64_t> addresses = sample_stack_.frames(sample, processes_);
  if (addresses.size() > kMaxFrames) addresses = addresses.first(kMaxFrames);

  frames_.clear();
  for (size_t i = 0; i < addresses.size(); ++i) {
    const uint64_t address = addresses[i];
    const store::Frame f = address >= collect::kKernelSpaceStart ? kernel_frame(address)
                                                                 : user_frame(pid, address);
    // A caller in no mapping is a frame-pointer walk gone astray (code built without frame
    // pointers): it and what follows are noise.
    if (i > 0 && unknown_image_ >= 0 && f.image == static_cast<uint32_t>(unknown_image_)) break;
    if (f.offset == UINT32_MAX) {
      ++stats_.dropped_frames;
      if (i == 0) return;  // no leaf, no sample
      continue;
    }
    frames_.push_back(f);
  }
  if (off_cpu_ && sample.event == off_cpu_->event()) {
    off_cpu_->switch_sample(sample.origin.tid, frames_);
    return;
  }
  aggregate_.add_sample(sample.event, frames_, sample.period);
  if (push_ != nullptr) push_->add(pid, sample.event, frames_, sample.period);
}

void Collector::on_mmap(const collect::MmapRecord& m) {
  // The service is looked up now, while the process is alive: its samples may be read
  // after it has exited and /proc no longer knows it.
  if (push_ != nullptr) push_->note_process(static_cast<pid_t>(m.pid));
  if (std::optional<collect::ImageMapping> mapping = collect::executable_mapping(m))
    processes_.process(static_cast<pid_t>(m.pid)).add(*mapping);
}

void Collector::on_comm(const collect::CommRecord& c) {
  if (!c.exec) return;
  processes_.exec(static_cast<pid_t>(c.pid));
  if (push_ != nullptr) push_->note_exec(static_cast<pid_t>(c.pid), c.comm);
  sample_stack_.forget(static_cast<pid_t>(c.pid));
}

void Collector::on_fork(const collect::TaskRecord& f) {
  if (off_cpu_) off_cpu_->thread_started(f.tid);
  if (f.pid == f.ppid) return;  // a new thread shares its process's maps
  const auto child = static_cast<pid_t>(f.pid);
  // A pid used again: the old process's pending removal must not take the new one.
  std::erase_if(exited_, [&](const auto& e) { return e.first == child; });
  processes_.fork(static_cast<pid_t>(f.ppid), child);
  if (push_ != nullptr) push_->note_fork(static_cast<pid_t>(f.ppid), child);
}

void Collector::on_exit(const collect::TaskRecord& e) {
  if (off_cpu_) off_cpu_->thread_exit(e.tid, e.time != 0 ? e.time : e.origin.time);
  if (e.pid != e.tid) return;
  exited_.emplace_back(static_cast<pid_t>(e.pid), e.time != 0 ? e.time : e.origin.time);
  sample_stack_.forget(static_cast<pid_t>(e.pid));
}

void Collector::on_lost(const collect::LostRecord& lost) { stats_.lost += lost.lost; }

void Collector::on_switch(const collect::SwitchRecord& record) {
  if (!off_cpu_) return;
  if (auto span = off_cpu_->switch_record(record)) {
    aggregate_.add_sample(off_cpu_->event(), span->frames, OffCpuSpans::kSampleNs, span->samples);
    if (push_ != nullptr)
      push_->add(static_cast<pid_t>(record.origin.pid), off_cpu_->event(), span->frames, span->nanoseconds);
  }
}

void Collector::forget_exited(uint64_t now_ns, uint64_t grace_ns) {
  if (off_cpu_) off_cpu_->forget_exited(now_ns, grace_ns);
  std::erase_if(exited_, [&](const auto& e) {
    if (e.second + grace_ns > now_ns) return false;
    processes_.erase(e.first);
    if (push_ != nullptr) push_->forget(e.first);
    return true;
  });
}

}  // namespace tally::daemon
