// Machine code to instructions with capstone (never objdump): AT&T syntax by default, as
// objdump and pprof -disasm show x86, or Intel. x86-64, i386 and AArch64.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"

namespace tally::analyze {

enum class AsmSyntax { att, intel };

struct Instruction {
  uint64_t address = 0;
  uint32_t size = 0;
  std::string text;  // "mnemonic\toperands", as objdump separates them
  std::optional<uint64_t> target;     // a direct jump's or call's destination
  std::optional<uint64_t> reference;  // a PC-relative memory operand's address
};

// Disassembles `code` loaded at `address` for ELF machine `machine` (EM_X86_64...).
// Bytes that decode to no instruction become ".byte 0x.." and decoding goes on.
core::Expected<std::vector<Instruction>> disassemble(int machine, std::span<const uint8_t> code,
                                                     uint64_t address, AsmSyntax syntax);

}  // namespace tally::analyze
