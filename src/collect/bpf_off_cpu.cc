#include "collect/bpf_off_cpu.h"

#ifdef TALLY_HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "collect/bpf/off_cpu_span.h"
#include "core/hash.h"
#include "off_cpu.skel.h"

namespace tally::collect {

namespace {

constexpr size_t kMaxStackDepth = 127;  // the program's stack map value: 127 addresses
constexpr std::chrono::milliseconds kReadInterval{50};
constexpr size_t kSpansPerChunk = 16384;

// A span as kept until stop(): the ring record with its stack ids and user stack words
// interned as one raw stack. A thread that blocks at one call site again and again has the
// same stacks and the same words there (2 threads ping-ponging over pipes: 7 distinct
// blocks of words in 200k spans), so a span costs 32 bytes kept, not the record's 176, and
// its frames are read and its consumer's work done once per raw stack.
struct KeptSpan {
  uint64_t start_ns = 0, end_ns = 0;
  int32_t pid = 0, tid = 0;
  uint32_t reason = 0;
  uint32_t raw_stack = 0;  // index in raw_stacks_
};

struct RawStack {
  int32_t user_stack_id = -1, kernel_stack_id = -1;
  bool has_words = false;
  std::array<uint64_t, OFF_CPU_USER_WORDS> words{};
  uint32_t frames = 0;  // index in stack_pairs_: its frames, by its two stack ids
  bool same_as(const RawStack& other) const {
    return user_stack_id == other.user_stack_id && kernel_stack_id == other.kernel_stack_id &&
           has_words == other.has_words && words == other.words;
  }
};

// Raw stacks kept with their words, at most: past them (words that differ at every switch,
// of threads preempted while they compute), a span whose words are new keeps its stack ids
// only, and its frames are the frame-pointer walk's alone. 9.4 MiB of words at most.
constexpr size_t kMaxRawStacksWithWords = 65536;

// libbpf prints its own diagnostics on stderr by default: the recorder says in one line
// why BPF was not used instead.
int quiet_libbpf(enum libbpf_print_level, const char*, va_list) { return 0; }

class Recorder final : public BpfOffCpu {
 public:
  ~Recorder() override {
    stop();
    if (ring_ != nullptr) ring_buffer__free(ring_);
    if (skel_ != nullptr) off_cpu_bpf__destroy(skel_);
  }

  core::Expected<bool> start(std::span<const pid_t> pids, bool from_exec) {
    libbpf_set_print(quiet_libbpf);
    skel_ = off_cpu_bpf__open_and_load();
    if (skel_ == nullptr) return failure("cannot load the BPF program", errno);
    // The program's TARGET_AT_EXEC and TARGET_FOLLOWED.
    const uint8_t state = from_exec ? 2 : 1;
    for (pid_t pid : pids) {
      const auto key = static_cast<uint32_t>(pid);
      if (bpf_map__update_elem(skel_->maps.target_pids, &key, sizeof(key), &state, sizeof(state), BPF_ANY) != 0)
        return failure("cannot set the target processes", errno);
    }
    if (off_cpu_bpf__attach(skel_) != 0) return failure("cannot attach the BPF program", errno);
    ring_ = ring_buffer__new(bpf_map__fd(skel_->maps.spans), on_record, this, nullptr);
    if (ring_ == nullptr) return failure("cannot read the BPF ring buffer", errno);
    // The reader runs on a timer, not on the buffer's readiness: epoll reports the ring
    // readable as soon as one span is in it, so a poll loop woke for a few spans at a time,
    // and each wakeup was two more context switches on the target's CPUs. 8 MiB of ring
    // holds 170k spans, over a second of the busiest switching measured, against 50 ms.
    reader_ = std::thread([this] {
      std::unique_lock lock(stop_mutex_);
      while (!stop_requested_) {
        ring_buffer__consume(ring_);
        stop_wakeup_.wait_for(lock, kReadInterval, [this] { return stop_requested_; });
      }
    });
    return true;
  }

  void stop() override {
    if (stopped_) return;
    stopped_ = true;
    {
      std::lock_guard lock(stop_mutex_);
      stop_requested_ = true;
    }
    stop_wakeup_.notify_all();
    if (reader_.joinable()) reader_.join();
    if (skel_ != nullptr) {
      off_cpu_bpf__detach(skel_);
      if (ring_ != nullptr) ring_buffer__consume(ring_);
      lost_ = skel_->bss->lost_spans;
      read_open_spans();
    }
  }

  void for_each_span(const std::function<void(const KernelOffCpuSpan&)>& visit) override {
    const int stacks_fd = skel_ != nullptr ? bpf_map__fd(skel_->maps.stacks) : -1;
    for (const std::vector<KeptSpan>& chunk : spans_)
      for (const KeptSpan& kept : chunk) visit_span(kept, stacks_fd, visit);
  }

  uint64_t lost() const override { return lost_; }
  uint64_t unstacked() const override { return unstacked_; }
  uint64_t without_user_stack() const override { return without_user_stack_; }
  uint64_t leaving_for_user() const override { return leaving_for_user_; }

 private:
  void visit_span(const KeptSpan& kept, int stacks_fd,
                  const std::function<void(const KernelOffCpuSpan&)>& visit) {
    const RawStack& raw = raw_stacks_[kept.raw_stack];
    if (raw.kernel_stack_id == OFF_CPU_KERNEL_STACK_SKIPPED) ++leaving_for_user_;
    // Kernel frames, then user frames, read once per pair of stack ids.
    StackPair& frames = stack_pairs_[raw.frames];
    if (!frames.read) {
      frames.read = true;
      append_stack(stacks_fd, raw.kernel_stack_id, frames.frames);
      frames.kernel = frames.frames.size();
      append_stack(stacks_fd, raw.user_stack_id, frames.frames);
    }
    if (frames.frames.empty()) ++unstacked_;
    else if (frames.frames.size() == frames.kernel) ++without_user_stack_;
    visit({.pid = static_cast<uint32_t>(kept.pid),
           .tid = static_cast<uint32_t>(kept.tid),
           .start = kept.start_ns,
           .end = kept.end_ns,
           .preempted = kept.reason == OFF_CPU_PREEMPTED,
           .to_end = kept.end_ns == 0,
           .frames = frames.frames,
           .user_words = raw.has_words ? std::span<const uint64_t>(raw.words) : std::span<const uint64_t>(),
           .raw_stack = kept.raw_stack + 1});
  }

  static core::Error failure(const char* what, int error) {
    return core::Error{fmt::format("{}: {}", what, std::strerror(error)), core::ErrorKind::unsupported};
  }

  // The threads switched out and not back when the program stopped: spans the end of
  // the recording cuts (end_ns 0).
  void read_open_spans() {
    const int fd = bpf_map__fd(skel_->maps.starts);
    uint32_t key = 0, next = 0;
    const uint32_t* previous = nullptr;
    while (bpf_map_get_next_key(fd, previous, &next) == 0) {
      off_cpu_switched_out out{};
      if (bpf_map_lookup_elem(fd, &next, &out) == 0) {
        off_cpu_span span{.start_ns = out.start_ns,
                          .end_ns = 0,
                          .pid = out.pid,
                          .tid = static_cast<int>(next),
                          .user_stack_id = out.user_stack_id,
                          .kernel_stack_id = out.kernel_stack_id,
                          .reason = out.reason,
                          .cpu_in = 0,
                          .user_sp = out.user_sp,
                          .user_words = {}};
        std::memcpy(span.user_words, out.user_words, sizeof span.user_words);
        keep(span);
      }
      key = next;
      previous = &key;
    }
  }

  static int on_record(void* context, void* data, size_t size) {
    if (size < sizeof(off_cpu_span)) return 0;
    off_cpu_span span;
    std::memcpy(&span, data, sizeof(span));
    static_cast<Recorder*>(context)->keep(span);
    return 0;
  }

  // Spans are kept in chunks: a vector of them all would copy (and touch anew) every span
  // each time it grew.
  void keep(const off_cpu_span& span) {
    if (spans_.empty() || spans_.back().size() == kSpansPerChunk) {
      spans_.emplace_back();
      spans_.back().reserve(kSpansPerChunk);
    }
    spans_.back().push_back({.start_ns = span.start_ns,
                             .end_ns = span.end_ns,
                             .pid = span.pid,
                             .tid = span.tid,
                             .reason = span.reason,
                             .raw_stack = intern_raw_stack(span)});
  }

  // A raw stack seen before is found by a table of the latest one per hash slot: cheaper
  // than a hash map (this runs per span), and one pushed out of its slot by another is only
  // kept twice.
  uint32_t intern_raw_stack(const off_cpu_span& span) {
    RawStack raw{.user_stack_id = span.user_stack_id, .kernel_stack_id = span.kernel_stack_id};
    // Words matter only beside a user stack to complete. The record's words are unsigned
    // long long, the pool's uint64_t: copied, not aliased.
    raw.has_words = span.user_sp != 0 && span.user_stack_id >= 0;
    if (raw.has_words) std::copy(std::begin(span.user_words), std::end(span.user_words), raw.words.begin());
    uint32_t* slot = latest_slot(raw);
    if (*slot != kNone && raw_stacks_[*slot].same_as(raw)) return *slot;
    if (raw.has_words && raw_stacks_.size() >= kMaxRawStacksWithWords) {
      raw.has_words = false;
      raw.words = {};
      slot = latest_slot(raw);
      if (*slot != kNone && raw_stacks_[*slot].same_as(raw)) return *slot;
    }
    const uint64_t ids = uint64_t(uint32_t(raw.user_stack_id)) << 32 | uint32_t(raw.kernel_stack_id);
    auto [pair, added] = stack_pair_of_ids_.try_emplace(ids, static_cast<uint32_t>(stack_pairs_.size()));
    if (added) stack_pairs_.emplace_back();
    raw.frames = pair->second;
    raw_stacks_.push_back(raw);
    *slot = static_cast<uint32_t>(raw_stacks_.size() - 1);
    return *slot;
  }

  uint32_t* latest_slot(const RawStack& raw) {
    uint64_t h = uint64_t(uint32_t(raw.user_stack_id)) << 32 | uint32_t(raw.kernel_stack_id);
    for (size_t i = 0; i < raw.words.size(); ++i) h ^= std::rotl(raw.words[i], static_cast<int>(i * 5 + 1));
    return &latest_raw_stack_[core::mix64(h) % latest_raw_stack_.size()];
  }

  // One map lookup per distinct stack id: spans share a few stacks.
  void append_stack(int fd, int id, std::vector<uint64_t>& frames) {
    if (id < 0 || fd < 0) return;
    auto [it, added] = stacks_.try_emplace(id);
    if (added) {
      std::vector<uint64_t> addresses(kMaxStackDepth, 0);
      const auto key = static_cast<uint32_t>(id);
      if (bpf_map_lookup_elem(fd, &key, addresses.data()) == 0) {
        for (uint64_t pc : addresses) {
          if (pc == 0) break;
          it->second.push_back(pc);
        }
      }
    }
    frames.insert(frames.end(), it->second.begin(), it->second.end());
  }

  off_cpu_bpf* skel_ = nullptr;
  ring_buffer* ring_ = nullptr;
  std::thread reader_;
  std::mutex stop_mutex_;
  std::condition_variable stop_wakeup_;
  bool stop_requested_ = false;  // guarded by stop_mutex_
  bool stopped_ = false;
  static constexpr uint32_t kNone = UINT32_MAX;
  // Written by the reader thread until stop().
  std::vector<std::vector<KeptSpan>> spans_;
  std::vector<RawStack> raw_stacks_;
  std::vector<uint32_t> latest_raw_stack_ = std::vector<uint32_t>(4096, kNone);  // by hash slot
  struct StackPair {
    bool read = false;  // by for_each_span
    size_t kernel = 0;  // frames[0, kernel) are the kernel's
    std::vector<uint64_t> frames;
  };
  std::vector<StackPair> stack_pairs_;
  std::unordered_map<uint64_t, uint32_t> stack_pair_of_ids_;  // user id << 32 | kernel id
  std::unordered_map<int, std::vector<uint64_t>> stacks_;
  uint64_t lost_ = 0, unstacked_ = 0, without_user_stack_ = 0, leaving_for_user_ = 0;
};

}  // namespace

bool BpfOffCpu::built() { return true; }

core::Expected<std::unique_ptr<BpfOffCpu>> BpfOffCpu::open(std::span<const pid_t> pids, bool from_exec) {
  auto recorder = std::make_unique<Recorder>();
  if (auto started = recorder->start(pids, from_exec); !started) return started.error();
  return std::unique_ptr<BpfOffCpu>(std::move(recorder));
}

}  // namespace tally::collect

#else

namespace tally::collect {

bool BpfOffCpu::built() { return false; }

core::Expected<std::unique_ptr<BpfOffCpu>> BpfOffCpu::open(std::span<const pid_t>, bool) {
  return core::Error{"this tally was built without BPF (needs clang, bpftool and libbpf-dev)",
                     core::ErrorKind::unsupported};
}

}  // namespace tally::collect

#endif
