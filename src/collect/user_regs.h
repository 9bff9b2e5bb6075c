// The x86-64 user registers a sample carries with PERF_SAMPLE_REGS_USER, as the DWARF
// unwinder needs them (perf's own choice of registers: every general register, no segment
// registers).
#pragma once

#include <asm/perf_regs.h>

#include <array>
#include <cstdint>

namespace tally::collect {

// sample_regs_user: AX..R15 of enum perf_event_x86_regs, without DS, ES, FS and GS.
inline constexpr uint64_t kSampledUserRegs =
    ((1ULL << PERF_REG_X86_64_MAX) - 1) &
    ~((1ULL << PERF_REG_X86_DS) | (1ULL << PERF_REG_X86_ES) | (1ULL << PERF_REG_X86_FS) |
      (1ULL << PERF_REG_X86_GS));

struct UserRegs {
  uint64_t abi = 0;  // PERF_SAMPLE_REGS_ABI_*: NONE when the sample hit a kernel thread
  // Indexed by enum perf_event_x86_regs (PERF_REG_X86_IP, PERF_REG_X86_SP, ...); registers
  // not in the mask are 0.
  std::array<uint64_t, PERF_REG_X86_64_MAX> value{};
  uint64_t ip() const { return value[PERF_REG_X86_IP]; }
  uint64_t sp() const { return value[PERF_REG_X86_SP]; }
  uint64_t bp() const { return value[PERF_REG_X86_BP]; }
};

}  // namespace tally::collect
