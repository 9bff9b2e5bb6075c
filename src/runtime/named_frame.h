// A function of libtally whose only use is its name: its address recorded as a frame makes
// every reader that symbolizes from the binaries (tally, pprof, google-pprof) print that
// name. Exported, so that the name survives stripping. Never called: `nop; ret` is valid
// on x86-64 and AArch64 alike; the assembler takes any name in quotes.
#pragma once

#define TALLY_NAMED_FRAME_FUNCTION(name) \
  ".globl \"" name "\"\n"                \
  ".type \"" name "\", %function\n"      \
  "\"" name "\":\n"                      \
  "  nop\n"                              \
  "  ret\n"                              \
  ".size \"" name "\", .-\"" name "\"\n"

// The C++ declaration's asm label for such a name. GCC copies an asm label into its
// assembly as written, so a name with spaces needs the quotes; clang quotes the label
// itself and would take the quotes as part of the name.
#if defined(__clang__)
#define TALLY_ASM_LABEL(name) name
#else
#define TALLY_ASM_LABEL(name) "\"" name "\""
#endif
