// Samples taken by the test program itself through the unwind fixture library, and the
// symbolization of unwound chains with src/symbolize, for the DWARF unwinder's tests.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collect/process_maps.h"
#include "collect/user_regs.h"
#include "symbolize/address_resolver.h"
#include "unwind_fixture.h"

namespace tally::test {

struct OwnSample {
  collect::UserRegs regs;
  std::vector<uint8_t> stack;  // from regs.sp() up
};

// The highest address of the calling thread's stack (one past it).
uint64_t stack_top();
// This test process's own address space, read from /proc/self/maps once.
const collect::AddressSpace& own_maps();
// Runs `take(sample)`, which must end in uf_leaf, copying up to `capacity` stack bytes.
template <class Take>
OwnSample take_sample(Take take, size_t capacity = 256 * 1024) {
  OwnSample own;
  own.stack.resize(capacity);
  UfSample sample{};
  sample.stack = own.stack.data();
  sample.stack_capacity = capacity;
  sample.stack_limit = stack_top();
  take(&sample);
  own.stack.resize(sample.stack_size);
  own.regs.abi = 2;  // PERF_SAMPLE_REGS_ABI_64
  for (size_t i = 0; i < own.regs.value.size(); ++i) own.regs.value[i] = sample.regs[i];
  return own;
}

// A sample in the unwind fixture's code that has no CFI (uf_run_nocfi).
OwnSample sample_without_cfi();

struct KernelSample {
  collect::UserRegs regs;
  std::vector<uint8_t> stack;
};

// cpu-clock samples with user registers and `stack_bytes` of user stack, as `tally
// record -g dwarf` asks for them (perf_event_open), of the calling thread (pid 0) or of
// process `pid` (from its exec when `on_exec`). The ring buffer holds ~60 samples of
// 16 KiB: drain() it while the target runs, or read it once stopped.
class SelfSampler {
 public:
  SelfSampler(uint64_t period_ns, uint32_t stack_bytes, pid_t pid = 0, bool on_exec = false);
  ~SelfSampler();
  SelfSampler(const SelfSampler&) = delete;
  SelfSampler& operator=(const SelfSampler&) = delete;
  const std::string& problem() const { return problem_; }  // "" when sampling works
  void start();
  void stop();
  // The samples recorded since the last call; frees their space in the ring.
  std::vector<KernelSample> samples();

 private:
  int fd_ = -1;
  void* ring_ = nullptr;
  size_t ring_size_ = 0;
  size_t page_ = 4096;
  std::string problem_;
};

// Where an address is: the mapped file and the function (from the ELF's symbols or DWARF).
struct Place {
  std::string file;
  std::string function;
};

class Symbols {
 public:
  explicit Symbols(const collect::AddressSpace& maps) : maps_(maps) {}
  Place at(uint64_t address);
  // One place per unwound pc (return addresses looked up one byte back, as symbolizers do).
  std::vector<Place> chain(const std::vector<uint64_t>& pcs);

 private:
  struct Binary {
    std::unique_ptr<symbolize::ElfIndex> index;  // one worker: the resolver's
    std::unique_ptr<symbolize::AddressResolver> resolver;
    std::vector<symbolize::LoadSegment> segments;
    bool is_exec = false;
  };
  const collect::AddressSpace& maps_;
  std::map<std::string, Binary> binaries_;
};

// "function (file)" per line, for failure messages.
std::string describe(const std::vector<Place>& chain);
std::string basename_of(const std::string& path);

}  // namespace tally::test
