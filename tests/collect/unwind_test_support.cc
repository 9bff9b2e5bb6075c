#include "unwind_test_support.h"

#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "symbolize/elf_image.h"
#include "symbolize/find_binary.h"

namespace tally::test {

const collect::AddressSpace& own_maps() {
  static collect::ProcessTable table;
  static const collect::AddressSpace* maps = [] {
    table.load_proc_maps(getpid());
    return table.find(getpid());
  }();
  return *maps;
}

__attribute__((noinline)) OwnSample sample_without_cfi() {
  OwnSample own = take_sample([](UfSample* s) { uf_run_nocfi(s); });
  asm volatile("" ::: "memory");
  return own;
}

uint64_t stack_top() {
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
  void* low = nullptr;
  size_t size = 0;
  pthread_attr_getstack(&attributes, &low, &size);
  pthread_attr_destroy(&attributes);
  return reinterpret_cast<uint64_t>(low) + size;
}

namespace {

constexpr size_t kRingDataPages = 256;  // 1 MiB

void copy_out(const uint8_t* data, uint64_t size, uint64_t at, void* out, size_t n) {
  auto* bytes = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; ++i) bytes[i] = data[(at + i) % size];
}

// IP, PID/TID, then REGS_USER (abi, one word per mask bit), then STACK_USER (size, bytes,
// dyn_size): the order of the sample_type bits.
KernelSample parse_sample(const std::vector<uint8_t>& record) {
  KernelSample sample;
  size_t at = sizeof(perf_event_header) + 8 + 8;
  auto word = [&] {
    uint64_t value = 0;
    if (at + 8 <= record.size()) std::memcpy(&value, record.data() + at, 8);
    at += 8;
    return value;
  };
  sample.regs.abi = word();
  if (sample.regs.abi != PERF_SAMPLE_REGS_ABI_NONE) {
    for (unsigned bit = 0; bit < PERF_REG_X86_64_MAX; ++bit)
      if (collect::kSampledUserRegs & (1ULL << bit)) sample.regs.value[bit] = word();
  }
  uint64_t copied = word();
  if (copied > 0 && at + copied + 8 <= record.size()) {
    uint64_t dyn_size = 0;
    std::memcpy(&dyn_size, record.data() + at + copied, 8);
    sample.stack.assign(record.data() + at, record.data() + at + std::min(copied, dyn_size));
  }
  return sample;
}

}  // namespace

SelfSampler::SelfSampler(uint64_t period_ns, uint32_t stack_bytes, pid_t pid, bool on_exec) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = period_ns;
  attr.sample_type =
      PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  attr.sample_regs_user = collect::kSampledUserRegs;
  attr.sample_stack_user = stack_bytes;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  attr.enable_on_exec = on_exec ? 1 : 0;
  fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd_ < 0) {
    problem_ = std::string("perf_event_open: ") + std::strerror(errno);
    return;
  }
  page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  ring_size_ = (1 + kRingDataPages) * page_;
  ring_ = mmap(nullptr, ring_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (ring_ == MAP_FAILED) {
    ring_ = nullptr;
    problem_ = std::string("mmap of the ring buffer: ") + std::strerror(errno);
  }
}

SelfSampler::~SelfSampler() {
  if (ring_ != nullptr) munmap(ring_, ring_size_);
  if (fd_ >= 0) close(fd_);
}

void SelfSampler::start() { ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0); }
void SelfSampler::stop() { ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0); }

std::vector<KernelSample> SelfSampler::samples() {
  std::vector<KernelSample> samples;
  if (ring_ == nullptr) return samples;
  auto* meta = static_cast<perf_event_mmap_page*>(ring_);
  const auto* data = static_cast<const uint8_t*>(ring_) + page_;
  const uint64_t size = kRingDataPages * page_;
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  std::vector<uint8_t> record;
  uint64_t tail = meta->data_tail;
  while (tail < head) {
    perf_event_header header;
    copy_out(data, size, tail, &header, sizeof header);
    if (header.size < sizeof header) break;
    record.resize(header.size);
    copy_out(data, size, tail, record.data(), header.size);
    tail += header.size;
    if (header.type == PERF_RECORD_SAMPLE) samples.push_back(parse_sample(record));
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  return samples;
}

Place Symbols::at(uint64_t address) {
  const collect::ImageMapping* mapping = maps_.find(address);
  if (mapping == nullptr) return {};
  Place place{mapping->path, ""};
  auto [it, inserted] = binaries_.try_emplace(mapping->path);
  Binary& binary = it->second;
  if (inserted && !mapping->path.empty() && mapping->path.front() == '/') {
    binary.index = std::make_unique<symbolize::ElfIndex>(
        symbolize::find_binary(mapping->path, "", {}), 1);
    binary.resolver = std::make_unique<symbolize::AddressResolver>(*binary.index, 0);
    if (auto image = symbolize::ElfImage::open(mapping->path)) {
      binary.segments = image->load_segments();
      binary.is_exec = image->is_exec();
    }
  }
  if (!binary.resolver) return place;
  auto link = symbolize::link_time_address(binary.segments, binary.is_exec, mapping->start,
                                           mapping->pgoff, address);
  if (!link) return place;
  std::vector<symbolize::Frame> frames;
  uint32_t end = 0;
  const uint64_t addresses[] = {*link};
  binary.resolver->resolve(binary.index->unit_of(*link), addresses, frames, {&end, 1});
  if (!frames.empty() && frames.back().function != nullptr)
    place.function = frames.back().function->name;
  return place;
}

std::vector<Place> Symbols::chain(const std::vector<uint64_t>& pcs) {
  std::vector<Place> places;
  for (size_t i = 0; i < pcs.size(); ++i) places.push_back(at(i == 0 ? pcs[i] : pcs[i] - 1));
  return places;
}

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string describe(const std::vector<Place>& chain) {
  std::string text;
  for (size_t i = 0; i < chain.size(); ++i)
    text += "  #" + std::to_string(i) + " " + (chain[i].function.empty() ? "?" : chain[i].function) +
            " (" + basename_of(chain[i].file) + ")\n";
  return text;
}

}  // namespace tally::test
