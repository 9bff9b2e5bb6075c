// The DWARF unwinder on hostile samples: in system-wide recording the registers and the
// stack copy come from any process on the machine, so a crafted stack must not crash,
// hang or run away. The input is turned into registers and stack words that point where
// an unwinder goes: into this process's own code (its real CFI), into the stack copy
// itself, or anywhere.
#include <linux/perf_event.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "collect/dwarf_unwind.h"
#include "fuzz_check.h"

using namespace tally;

namespace {

struct Target {
  collect::ProcessTable table;
  const collect::AddressSpace* maps = nullptr;
  std::vector<const collect::ImageMapping*> code;
  collect::DwarfUnwinder unwinder;
  Target() {
    table.load_proc_maps(getpid());
    maps = table.find(getpid());
    if (maps == nullptr) std::abort();
    for (const auto* mapping : maps->all())
      if (mapping->executable) code.push_back(mapping);
    if (code.empty()) std::abort();
  }
};

constexpr uint64_t kStackBase = 0x7ffd00000000;
constexpr size_t kMaxFrames = 128;

// A word made to point somewhere interesting, chosen by its low two bits.
uint64_t aim(const Target& target, uint64_t word, size_t stack_size) {
  switch (word & 3) {
    case 0: {
      const auto* code = target.code[(word >> 2) % target.code.size()];
      return code->start + (word >> 10) % (code->limit - code->start);
    }
    case 1:
      return kStackBase + ((word >> 2) % (stack_size + 64) & ~uint64_t{7});
    default:
      return word;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Target target;
  std::vector<uint64_t> words((size + 7) / 8);
  if (size > 0) std::memcpy(words.data(), data, size);
  const size_t register_words = 17;
  size_t stack_words = words.size() > register_words ? words.size() - register_words : 0;
  size_t stack_size = stack_words * 8;

  collect::UserRegs regs;
  regs.abi = PERF_SAMPLE_REGS_ABI_64;
  for (size_t i = 0; i < register_words && i < words.size(); ++i) {
    static const int perf_index[register_words] = {
        PERF_REG_X86_AX,  PERF_REG_X86_BX,  PERF_REG_X86_CX,  PERF_REG_X86_DX,  PERF_REG_X86_SI,
        PERF_REG_X86_DI,  PERF_REG_X86_BP,  PERF_REG_X86_IP,  PERF_REG_X86_R8,  PERF_REG_X86_R9,
        PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14,
        PERF_REG_X86_R15, PERF_REG_X86_FLAGS};
    regs.value[perf_index[i]] = aim(target, words[i], stack_size);
  }
  regs.value[PERF_REG_X86_SP] = kStackBase;
  std::vector<uint8_t> stack(stack_size);
  for (size_t i = 0; i < stack_words; ++i) {
    uint64_t word = aim(target, words[register_words + i], stack_size);
    std::memcpy(stack.data() + 8 * i, &word, 8);
  }

  std::vector<uint64_t> pcs;
  uint64_t before = target.unwinder.stats().frames;
  target.unwinder.unwind(getpid(), *target.maps, regs, stack, pcs, kMaxFrames);
  FUZZ_CHECK(pcs.size() >= 1 && pcs.size() <= kMaxFrames, "between one frame and the limit");
  FUZZ_CHECK(pcs[0] == regs.ip(), "the sampled address comes first");
  FUZZ_CHECK(target.unwinder.stats().frames - before == pcs.size(), "frames counted");
  return 0;
}
