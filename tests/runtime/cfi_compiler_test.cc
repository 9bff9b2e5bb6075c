// The CFI compiler (src/runtime/cfi_compiler.cc) against elfutils' libdw on real ELF files
// of this machine: at many addresses of libc, libstdc++, libm and this test, the rule a row
// gives (CFA register and offset, where rbp is saved, undefined return address, signal
// frame) is the one libdw's dwarf_cfi_addrframe computes from the same .eh_frame. Also:
// truncated and corrupted sections give an error or fewer rows, never a bad read.
#include <gtest/gtest.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/cfi_compiler.h"
#include "runtime/debug_frame_file.h"

namespace tally::runtime {
namespace {

struct ElfFile {
  int fd = -1;
  Elf* elf = nullptr;
  std::vector<uint8_t> eh_frame;
  uint64_t eh_frame_address = 0;
  std::vector<uint8_t> debug_frame;

  explicit ElfFile(const std::string& path) {
    elf_version(EV_CURRENT);
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    elf = elf_begin(fd, ELF_C_READ, nullptr);
    size_t names = 0;
    if (elf == nullptr || elf_getshdrstrndx(elf, &names) != 0) return;
    for (Elf_Scn* section = nullptr; (section = elf_nextscn(elf, section)) != nullptr;) {
      GElf_Shdr header;
      if (gelf_getshdr(section, &header) == nullptr) continue;
      const char* name = elf_strptr(elf, names, header.sh_name);
      if (name == nullptr || (strcmp(name, ".eh_frame") != 0 && strcmp(name, ".debug_frame") != 0)) continue;
      Elf_Data* data = elf_rawdata(section, nullptr);
      if (data == nullptr) continue;
      const auto* bytes = static_cast<const uint8_t*>(data->d_buf);
      if (strcmp(name, ".debug_frame") == 0) {
        debug_frame.assign(bytes, bytes + data->d_size);
        continue;
      }
      eh_frame.assign(bytes, bytes + data->d_size);
      eh_frame_address = header.sh_addr;
    }
  }
  ~ElfFile() {
    if (elf != nullptr) elf_end(elf);
    if (fd >= 0) close(fd);
  }
};

void collect(void* context, const UnwindRow& row) { static_cast<std::vector<UnwindRow>*>(context)->push_back(row); }

std::vector<UnwindRow> compile(const std::vector<uint8_t>& bytes, uint64_t address, CompileResult* result) {
  std::vector<UnwindRow> rows;
  *result = compile_eh_frame({bytes.data(), bytes.size(), address}, collect, &rows);
  rows.resize(sort_unwind_rows(rows.data(), rows.size()));
  return rows;
}

// libdw's answer for one address, in the compiler's terms.
struct Expected {
  bool covered = false;
  RuleKind kind = RuleKind::none;
  int64_t cfa_offset = 0;
  SavedRule rbp = SavedRule::same;
  int64_t rbp_offset = 0;
  SavedRule rbx = SavedRule::same;
  int64_t rbx_offset = 0;
};

// libdw's dwarf_frame_register: *nops 0 with *ops == ops_mem is "undefined", with *ops
// null "same value". A register rule as libdw gives it (ops: DW_OP_call_frame_cfa, then offsets): saved at
// CFA + offset, or not of that form.
bool saved_at_cfa(const Dwarf_Op* ops, size_t count, int64_t* offset) {
  if (count == 0 || ops[0].atom != DW_OP_call_frame_cfa) return false;
  int64_t value = 0;
  for (size_t i = 1; i < count; ++i) {
    if (ops[i].atom == DW_OP_plus_uconst) value += static_cast<int64_t>(ops[i].number);
    else if (ops[i].atom == DW_OP_consts && i + 1 < count && ops[i + 1].atom == DW_OP_plus) value += static_cast<int64_t>(ops[i].number), ++i;
    else return false;
  }
  *offset = value;
  return true;
}

Expected libdw_rule_of(Dwarf_Frame* frame);

// libdw's rule for a callee-saved register (DWARF number `reg`), in the compiler's terms.
SavedRule libdw_saved_rule(Dwarf_Frame* frame, int reg, int64_t* offset) {
  Dwarf_Op ops_mem[3];
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  bool ok = dwarf_frame_register(frame, reg, ops_mem, &ops, &count) == 0;
  if (ok && ops == nullptr && count == 0) return SavedRule::same;
  // No rule: elfutils' x86-64 initial rules give rbp "same value" but leave rbx
  // undefined; the psABI says callee-saved registers keep their values (the compiler's view).
  if (ok && reg == 3 && ops == ops_mem && count == 0) return SavedRule::same;
  if (ok && ops != nullptr && saved_at_cfa(ops, count, offset)) return SavedRule::at_cfa;
  return SavedRule::lost;
}

Expected libdw_rule(Dwarf_CFI* cfi, uint64_t address) {
  Dwarf_Frame* frame = nullptr;
  if (dwarf_cfi_addrframe(cfi, address, &frame) != 0) return Expected{};
  Expected expected = libdw_rule_of(frame);
  free(frame);  // the caller's, says libdw.h
  return expected;
}

Expected libdw_rule_of(Dwarf_Frame* frame) {
  Expected expected;
  expected.covered = true;
  bool signal = false;
  int ra_register = dwarf_frame_info(frame, nullptr, nullptr, &signal);
  Dwarf_Op ra_ops_mem[3];
  Dwarf_Op* ra_ops = nullptr;
  size_t ra_count = 0;
  Dwarf_Op* cfa_ops = nullptr;
  size_t cfa_count = 0;
  int64_t ra_offset = 0;
  bool ra_ok = dwarf_frame_register(frame, ra_register, ra_ops_mem, &ra_ops, &ra_count) == 0;
  if (signal) {
    expected.kind = RuleKind::signal;
  } else if (ra_ok && ra_ops == ra_ops_mem && ra_count == 0) {  // undefined
    expected.kind = RuleKind::root;
  } else if (dwarf_frame_cfa(frame, &cfa_ops, &cfa_count) == 0 &&
             ((cfa_count == 1 && cfa_ops[0].atom == DW_OP_bregx && cfa_ops[0].number < 16 &&
               cfa_ops[0].number != 3 && cfa_ops[0].number != 6 && cfa_ops[0].number != 7 &&
               !(ra_ok && saved_at_cfa(ra_ops, ra_count, &ra_offset) && ra_offset == -8)) ||
              (ra_ok && ra_count == 1 && ra_ops != nullptr &&
               (ra_ops[0].atom == DW_OP_regx || (ra_ops[0].atom >= DW_OP_reg0 && ra_ops[0].atom <= DW_OP_reg31) ||
                (ra_ops[0].atom == DW_OP_bregx && ra_ops[0].number2 == 0))))) {
    // The return address kept in a register, or the CFA in another general register with
    // the return address elsewhere than just below it.
    expected.kind = RuleKind::stack_switch;
  } else if (!ra_ok || !saved_at_cfa(ra_ops, ra_count, &ra_offset) || ra_offset != -8 ||
             dwarf_frame_cfa(frame, &cfa_ops, &cfa_count) != 0) {
    expected.kind = RuleKind::unsupported;
  } else if (cfa_count == 1 && cfa_ops[0].atom == DW_OP_bregx &&
             (cfa_ops[0].number == 7 || cfa_ops[0].number == 6 || cfa_ops[0].number == 3)) {
    expected.kind = cfa_ops[0].number == 7   ? RuleKind::cfa_rsp
                    : cfa_ops[0].number == 6 ? RuleKind::cfa_rbp
                                             : RuleKind::cfa_rbx;
    expected.cfa_offset = static_cast<int64_t>(cfa_ops[0].number2);
    expected.rbp = libdw_saved_rule(frame, 6, &expected.rbp_offset);
    expected.rbx = libdw_saved_rule(frame, 3, &expected.rbx_offset);
  } else if (cfa_count == 9 && cfa_ops[0].atom == DW_OP_breg7 && cfa_ops[1].atom == DW_OP_breg16) {
    expected.kind = RuleKind::plt;
    expected.cfa_offset = static_cast<int64_t>(cfa_ops[0].number);
  } else {
    expected.kind = RuleKind::unsupported;
  }
  return expected;
}

struct Comparison {
  size_t addresses = 0;
  size_t mismatches = 0;
  size_t covered = 0;
  size_t saved_rules_compared = 0;  // addresses whose rbp and rbx rules matched libdw's
  size_t rbx_saves = 0;             // of which rbx saved at CFA + N
  size_t rbx_cfas = 0;              // CFA = rbx + N
  std::string first_mismatches;
};

void compare_at(Dwarf_CFI* cfi, const std::vector<UnwindRow>& rows, uint64_t address, Comparison& out) {
  Expected expected = libdw_rule(cfi, address);
  const UnwindRow* row = find_unwind_row(rows.data(), rows.size(), address);
  ++out.addresses;
  bool same;
  if (!expected.covered) {
    same = row == nullptr;
  } else {
    ++out.covered;
    same = row != nullptr && row->kind == expected.kind;
    if (same && (expected.kind == RuleKind::cfa_rsp || expected.kind == RuleKind::cfa_rbp ||
                 expected.kind == RuleKind::cfa_rbx)) {
      same = row->cfa_offset == expected.cfa_offset && row->rbp() == expected.rbp &&
             (expected.rbp != SavedRule::at_cfa || row->rbp_offset() == expected.rbp_offset) &&
             row->rbx() == expected.rbx &&
             (expected.rbx != SavedRule::at_cfa || row->rbx_offset() == expected.rbx_offset);
      if (same) ++out.saved_rules_compared;
      if (same && expected.rbx == SavedRule::at_cfa) ++out.rbx_saves;
      if (same && expected.kind == RuleKind::cfa_rbx) ++out.rbx_cfas;
    }
    if (same && expected.kind == RuleKind::plt) same = row->cfa_offset == expected.cfa_offset;
  }
  if (!same) {
    ++out.mismatches;
    if (out.mismatches <= 5) {
      char line[300];
      snprintf(line, sizeof line,
               "  %#llx: libdw kind %d cfa %lld rbp %d/%lld rbx %d/%lld; compiled %s kind %d cfa %d rbp %d/%d rbx %d/%d\n",
               static_cast<unsigned long long>(address), static_cast<int>(expected.kind),
               static_cast<long long>(expected.cfa_offset), static_cast<int>(expected.rbp),
               static_cast<long long>(expected.rbp_offset), static_cast<int>(expected.rbx),
               static_cast<long long>(expected.rbx_offset), row ? "" : "(none)",
               row ? static_cast<int>(row->kind) : -1, row ? row->cfa_offset : 0,
               row ? static_cast<int>(row->rbp()) : -1, row ? static_cast<int>(row->rbp_offset()) : 0,
               row ? static_cast<int>(row->rbx()) : -1, row ? static_cast<int>(row->rbx_offset()) : 0);
      out.first_mismatches += line;
    }
  }
}

class CfiCompilerAgainstLibdw : public ::testing::TestWithParam<std::string> {};

// Each row's first and last address and one inside it, against libdw.
Comparison compare_every_row(Dwarf_CFI* cfi, const std::vector<UnwindRow>& rows) {
  Comparison comparison;
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint64_t start = rows[i].address;
    const uint64_t end = i + 1 < rows.size() ? rows[i + 1].address : start + 1;
    compare_at(cfi, rows, start, comparison);
    compare_at(cfi, rows, end - 1, comparison);
    compare_at(cfi, rows, start + (end - start) / 2, comparison);
  }
  return comparison;
}

TEST_P(CfiCompilerAgainstLibdw, RulesMatchAtEveryRowBoundaryAndInside) {
  ElfFile file(GetParam());
  if (file.elf == nullptr) GTEST_SKIP() << GetParam() << " is not on this machine";
  ASSERT_FALSE(file.eh_frame.empty()) << GetParam() << " has no .eh_frame";
  CompileResult result;
  auto rows = compile(file.eh_frame, file.eh_frame_address, &result);
  ASSERT_TRUE(result.ok) << (result.error ? result.error : "") << " at " << result.error_offset;
  ASSERT_GT(result.fdes, 10u);
  Dwarf_CFI* cfi = dwarf_getcfi_elf(file.elf);
  ASSERT_NE(cfi, nullptr);
  const Comparison comparison = compare_every_row(cfi, rows);
  EXPECT_GT(comparison.covered, 1000u);
  // rbx's rule is compared too: most functions push it.
  EXPECT_GT(comparison.rbx_saves, comparison.covered / 20) << "of " << comparison.covered;
  if (GetParam().find("ld-linux") != std::string::npos) {
    // _dl_runtime_resolve_{fxsave,xsave,xsavec} (lazy binding) and _dl_tlsdesc_dynamic_*:
    // the stack realigned, CFA = rbx + N.
    EXPECT_GE(comparison.rbx_cfas, 3u);
  }
  if (GetParam().find("libc.so") != std::string::npos) {
    // libc has them all: __restore_rt (signal), _start/clone3's undefined return address,
    // its PLT, frame-pointer frames.
    // __longjmp (CFA in rdi), setcontext (rdx), vfork (return address in rdi).
    for (RuleKind kind : {RuleKind::signal, RuleKind::root, RuleKind::plt, RuleKind::cfa_rbp, RuleKind::stack_switch}) {
      bool found = false;
      for (const auto& row : rows) found = found || row.kind == kind;
      EXPECT_TRUE(found) << "no row of kind " << static_cast<int>(kind);
    }
  }
  EXPECT_EQ(comparison.mismatches, 0u) << "of " << comparison.addresses << " addresses:\n"
                                       << comparison.first_mismatches;
  dwarf_cfi_end(cfi);
}

INSTANTIATE_TEST_SUITE_P(MachineLibraries, CfiCompilerAgainstLibdw,
                         ::testing::Values("/lib/x86_64-linux-gnu/libc.so.6",
                                           "/lib64/ld-linux-x86-64.so.2",
                                           "/lib/x86_64-linux-gnu/libstdc++.so.6",
                                           "/lib/x86_64-linux-gnu/libm.so.6",
                                           "/lib/x86_64-linux-gnu/libz.so.1",
                                           "/proc/self/exe"));

// .debug_frame (issue 20): a program built -g without unwind tables has its functions'
// rules only there. The rows compiled from it (absolute addresses, CIE id all ones) against
// libdw's dwarf_getcfi, which reads .debug_frame alone; with a load bias, the same rows
// moved.
TEST(CfiCompilerDebugFrame, RulesMatchLibdwAtEveryRowBoundaryAndInside) {
  ElfFile file(DEBUG_FRAME_WORKLOAD);
  ASSERT_NE(file.elf, nullptr);
  ASSERT_FALSE(file.debug_frame.empty()) << DEBUG_FRAME_WORKLOAD << " has no .debug_frame";
  std::vector<UnwindRow> rows;
  CompileResult result = compile_debug_frame({file.debug_frame.data(), file.debug_frame.size(), 0}, collect, &rows);
  ASSERT_TRUE(result.ok) << (result.error ? result.error : "") << " at " << result.error_offset;
  rows.resize(sort_unwind_rows(rows.data(), rows.size()));
  EXPECT_GE(result.fdes, 5u) << "main, the recursion, the leaf, the thread's rounds";
  Dwarf* dwarf = dwarf_begin_elf(file.elf, DWARF_C_READ, nullptr);
  ASSERT_NE(dwarf, nullptr);
  Dwarf_CFI* cfi = dwarf_getcfi(dwarf);
  ASSERT_NE(cfi, nullptr);
  const Comparison comparison = compare_every_row(cfi, rows);
  EXPECT_GT(comparison.covered, 20u);
  EXPECT_EQ(comparison.mismatches, 0u) << "of " << comparison.addresses << " addresses:\n"
                                       << comparison.first_mismatches;
  // Frameless code: CFA from rsp with offsets that move as registers are pushed.
  size_t rsp_rows = 0;
  for (const auto& row : rows) rsp_rows += row.kind == RuleKind::cfa_rsp && row.cfa_offset > 8;
  EXPECT_GT(rsp_rows, 3u);
  dwarf_end(dwarf);

  std::vector<UnwindRow> moved;
  constexpr uint64_t kBias = 0x7f0000000000;
  compile_debug_frame({file.debug_frame.data(), file.debug_frame.size(), kBias}, collect, &moved);
  moved.resize(sort_unwind_rows(moved.data(), moved.size()));
  ASSERT_EQ(moved.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    UnwindRow expected = rows[i];
    expected.address += kBias;
    EXPECT_EQ(moved[i], expected) << "row " << i;
  }
}

// The index builder finds .debug_frame in the image's file: the same bytes libelf finds;
// a file without one, or cut short (section headers past its end), or not ELF, gives none.
TEST(DebugFrameFile, MapsTheSectionOrRefuses) {
  ElfFile file(DEBUG_FRAME_WORKLOAD);
  ASSERT_FALSE(file.debug_frame.empty());
  MappedDebugFrame mapped;
  ASSERT_TRUE(map_debug_frame(DEBUG_FRAME_WORKLOAD, &mapped));
  ASSERT_EQ(mapped.size, file.debug_frame.size());
  EXPECT_EQ(memcmp(mapped.bytes, file.debug_frame.data(), mapped.size), 0);
  unmap_debug_frame(&mapped);
  EXPECT_EQ(mapped.mapping, nullptr);

  EXPECT_FALSE(map_debug_frame("/lib/x86_64-linux-gnu/libc.so.6", &mapped)) << "Debian's libc has none";
  EXPECT_FALSE(map_debug_frame("/nonexistent/file", &mapped));
  EXPECT_FALSE(map_debug_frame("/proc/self/status", &mapped)) << "not a regular ELF file";
  // The workload cut at its half: the section headers (at the end) are gone.
  char path[] = "/tmp/tally-debug-frame-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  FILE* whole = fopen(DEBUG_FRAME_WORKLOAD, "rb");
  ASSERT_NE(whole, nullptr);
  std::vector<char> bytes(1 << 20);
  size_t length = fread(bytes.data(), 1, bytes.size(), whole);
  fclose(whole);
  ASSERT_GT(length, 1000u);
  ASSERT_EQ(write(fd, bytes.data(), length / 2), static_cast<ssize_t>(length / 2));
  close(fd);
  EXPECT_FALSE(map_debug_frame(path, &mapped));
  unlink(path);
}

// The format's differences, on a hand-made section: a 32-bit CIE (id 0xffffffff) and a
// 64-bit one (length 0xffffffff, id all ones), their FDEs pointing back by section offset,
// absolute 8-byte addresses, and zero padding between entries.
TEST(CfiCompilerDebugFrame, ReadsBothDwarfFormatsAndSkipsPadding) {
  std::vector<uint8_t> bytes;
  auto u32 = [&](uint32_t v) { for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  auto u64 = [&](uint64_t v) { for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  // CIE (32-bit) at 0: version 1, "", code 1, data -8, ra 16; def_cfa rsp+8, offset ra at cfa-8.
  std::vector<uint8_t> cie_body = {1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1};
  u32(static_cast<uint32_t>(4 + cie_body.size()));
  u32(0xffffffff);
  bytes.insert(bytes.end(), cie_body.begin(), cie_body.end());
  u32(0);  // padding
  // FDE (32-bit): CIE at 0, 0x1000..0x1020; at +4 def_cfa_offset 16.
  std::vector<uint8_t> program = {0x44, 0x0e, 16};
  u32(static_cast<uint32_t>(4 + 16 + program.size()));
  u32(0);
  u64(0x1000);
  u64(0x20);
  bytes.insert(bytes.end(), program.begin(), program.end());
  // CIE (64-bit) with the same rules.
  size_t cie64 = bytes.size();
  u32(0xffffffff);
  u64(8 + cie_body.size());
  u64(~uint64_t{0});
  bytes.insert(bytes.end(), cie_body.begin(), cie_body.end());
  // FDE (64-bit): 0x2000..0x2010, no program.
  u32(0xffffffff);
  u64(8 + 16);
  u64(cie64);
  u64(0x2000);
  u64(0x10);

  std::vector<UnwindRow> rows;
  CompileResult result = compile_debug_frame({bytes.data(), bytes.size(), 0x10000}, collect, &rows);
  ASSERT_TRUE(result.ok) << (result.error ? result.error : "") << " at " << result.error_offset;
  EXPECT_EQ(result.fdes, 2u);
  rows.resize(sort_unwind_rows(rows.data(), rows.size()));
  auto at = [&](uint64_t address) { return find_unwind_row(rows.data(), rows.size(), address); };
  ASSERT_NE(at(0x11000), nullptr);
  EXPECT_EQ(at(0x11000)->kind, RuleKind::cfa_rsp);
  EXPECT_EQ(at(0x11003)->cfa_offset, 8);
  EXPECT_EQ(at(0x11004)->cfa_offset, 16);
  EXPECT_EQ(at(0x1101f)->cfa_offset, 16);
  EXPECT_EQ(at(0x11020), nullptr);
  EXPECT_EQ(at(0x1000), nullptr) << "the load bias is added";
  ASSERT_NE(at(0x12000), nullptr);
  EXPECT_EQ(at(0x1200f)->cfa_offset, 8);
  EXPECT_EQ(at(0x12010), nullptr);

  // An .eh_frame reading of the same bytes fails (CIE id, CIE pointer), a .debug_frame one
  // with a CIE offset past the end reports it.
  bytes[bytes.size() - 24] = 0xff;  // the 64-bit FDE's CIE offset, low byte
  bytes[bytes.size() - 23] = 0xff;
  rows.clear();
  result = compile_debug_frame({bytes.data(), bytes.size(), 0}, collect, &rows);
  ASSERT_FALSE(result.ok);
  EXPECT_STREQ(result.error, "a CIE offset inside the section");
}

// Cut anywhere, or with bytes flipped, a real .eh_frame gives an error or rows; the rows of
// a cut section are a prefix of the whole one's FDEs (nothing invented).
TEST(CfiCompiler, TruncatedAndCorruptedSectionsFailCleanly) {
  ElfFile file("/lib/x86_64-linux-gnu/libc.so.6");
  if (file.elf == nullptr) GTEST_SKIP() << "no libc.so.6";
  CompileResult whole_result;
  auto whole = compile(file.eh_frame, file.eh_frame_address, &whole_result);
  ASSERT_TRUE(whole_result.ok);
  size_t errors = 0;
  for (size_t cut = 0; cut < file.eh_frame.size(); cut += 1 + file.eh_frame.size() / 97) {
    std::vector<uint8_t> truncated(file.eh_frame.begin(), file.eh_frame.begin() + static_cast<long>(cut));
    CompileResult result;
    compile(truncated, file.eh_frame_address, &result);
    if (!result.ok) {
      ++errors;
      EXPECT_LE(result.error_offset, cut);
      EXPECT_NE(result.error, nullptr);
    }
    EXPECT_LE(result.fdes, whole_result.fdes);
  }
  EXPECT_GT(errors, 50u) << "a section cut inside an entry is an error";
  uint64_t state = 12345;
  for (int round = 0; round < 200; ++round) {
    std::vector<uint8_t> corrupted = file.eh_frame;
    for (int flip = 0; flip < 8; ++flip) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      corrupted[(state >> 20) % corrupted.size()] ^= static_cast<uint8_t>(state >> 56 | 1);
    }
    CompileResult result;
    compile(corrupted, file.eh_frame_address, &result);
    if (!result.ok) {
      EXPECT_LT(result.error_offset, corrupted.size());
    }
  }
}

// An .eh_frame of one CIE ("zR", absolute 8-byte pointers, code 1, data -8, ra 16, the
// given initial instructions) and one FDE over [start, start + length) with `program`.
std::vector<uint8_t> one_function_eh_frame(const std::vector<uint8_t>& cie_program, uint64_t start, uint64_t length,
                                           const std::vector<uint8_t>& program) {
  std::vector<uint8_t> bytes;
  auto u32 = [&](uint32_t v) { for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  auto u64 = [&](uint64_t v) { for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  std::vector<uint8_t> cie = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x00};
  cie.insert(cie.end(), cie_program.begin(), cie_program.end());
  u32(static_cast<uint32_t>(cie.size()));
  bytes.insert(bytes.end(), cie.begin(), cie.end());
  size_t fde = bytes.size();
  u32(static_cast<uint32_t>(4 + 16 + 1 + program.size()));
  u32(static_cast<uint32_t>(fde + 4));  // back to the CIE at 0
  u64(start);
  u64(length);
  bytes.push_back(0);  // no augmentation data
  bytes.insert(bytes.end(), program.begin(), program.end());
  u32(0);  // terminator
  return bytes;
}

std::vector<UnwindRow> compile_all(const std::vector<uint8_t>& bytes) {
  CompileResult result;
  auto rows = compile(bytes, 0, &result);
  EXPECT_TRUE(result.ok) << (result.error ? result.error : "") << " at " << result.error_offset;
  EXPECT_EQ(result.fdes, 1u);
  return rows;
}

// ld.so's _dl_runtime_resolve_xsavec, as readelf shows it: the PLT pushed two words (CFA =
// rsp + 24), push %rbx (rbx at CFA - 32), mov %rsp,%rbx (CFA = rbx + 32), realign and save
// the vector registers; at the end CFA = rsp + 32 again, rbx restored, return.
TEST(CfiCompiler, CfaInRbxAndRbxSaves) {
  const std::vector<uint8_t> program = {
      0x0e, 24,        // def_cfa_offset 24
      0x41, 0x0e, 32,  // +1: def_cfa_offset 32
      0x83, 4,         // offset rbx at CFA - 32
      0x43, 0x0d, 3,   // +3: def_cfa_register rbx
      0x02, 0x6c,      // +0x6c (advance_loc1)
      0x0c, 7, 32,     // def_cfa rsp 32
      0x44, 0xc3,      // +4: restore rbx (same value)
      0x44, 0x0e, 8,   // +4: def_cfa_offset 8
  };
  auto rows = compile_all(one_function_eh_frame({0x0c, 7, 8, 0x90, 1}, 0x12140, 0x80, program));
  auto at = [&](uint64_t address) { return find_unwind_row(rows.data(), rows.size(), address); };
  ASSERT_NE(at(0x12140), nullptr);
  EXPECT_EQ(at(0x12140)->kind, RuleKind::cfa_rsp);
  EXPECT_EQ(at(0x12140)->cfa_offset, 24);
  EXPECT_EQ(at(0x12140)->rbx(), SavedRule::same);
  EXPECT_EQ(at(0x12141)->kind, RuleKind::cfa_rsp);
  EXPECT_EQ(at(0x12141)->cfa_offset, 32);
  EXPECT_EQ(at(0x12141)->rbx(), SavedRule::at_cfa);
  EXPECT_EQ(at(0x12141)->rbx_offset(), -32);
  for (uint64_t address : {0x12144, 0x12150, 0x121af}) {
    ASSERT_NE(at(address), nullptr);
    EXPECT_EQ(at(address)->kind, RuleKind::cfa_rbx) << std::hex << address;
    EXPECT_EQ(at(address)->cfa_offset, 32);
    EXPECT_EQ(at(address)->rbx(), SavedRule::at_cfa);
    EXPECT_EQ(at(address)->rbx_offset(), -32);
    EXPECT_EQ(at(address)->rbp(), SavedRule::same);
  }
  EXPECT_EQ(at(0x121b0)->kind, RuleKind::cfa_rsp);
  EXPECT_EQ(at(0x121b0)->rbx(), SavedRule::at_cfa);
  EXPECT_EQ(at(0x121b4)->rbx(), SavedRule::same);
  EXPECT_EQ(at(0x121b8)->cfa_offset, 8);
  EXPECT_EQ(at(0x121c0), nullptr);

  // The CFA in rbx with the return address elsewhere than CFA - 8 is code between stacks.
  rows = compile_all(one_function_eh_frame({0x0c, 7, 8, 0x90, 1}, 0x1000, 0x10, {0x0c, 3, 0, 0x90, 2}));
  ASSERT_NE(at(0x1000), nullptr);
  EXPECT_EQ(at(0x1000)->kind, RuleKind::stack_switch);

  // rbx saved farther than a row can say (CFA - 2000), undefined, or in a register: lost;
  // rbp's rules stay apart.
  for (std::vector<uint8_t> rule : {std::vector<uint8_t>{0x83, 250, 1}, std::vector<uint8_t>{0x07, 3},
                                    std::vector<uint8_t>{0x09, 3, 12}}) {
    std::vector<uint8_t> fde = {0x0e, 16, 0x86, 2};  // CFA = rsp + 16, rbp at CFA - 16
    fde.insert(fde.end(), rule.begin(), rule.end());
    rows = compile_all(one_function_eh_frame({0x0c, 7, 8, 0x90, 1}, 0x1000, 0x10, fde));
    ASSERT_NE(at(0x1000), nullptr);
    EXPECT_EQ(at(0x1000)->kind, RuleKind::cfa_rsp);
    EXPECT_EQ(at(0x1000)->rbx(), SavedRule::lost);
    EXPECT_EQ(at(0x1000)->rbp(), SavedRule::at_cfa);
    EXPECT_EQ(at(0x1000)->rbp_offset(), -16);
  }
}

// GCC's stack-realigning prologue with a DRAP register (r10):
//   lea 8(%rsp),%r10; and $-32,%rsp; push -8(%r10); push %rbp; mov %rsp,%rbp; push %r10; push %rbx
// CFA = r10 (a few instructions: unsupported), then rbp saved at rbp + 0, CFA = *(rbp - 8),
// rbx saved at rbp - 16 (DW_CFA_expression).
TEST(CfiCompiler, RealignedFrameWithCfaLoadedThroughRbp) {
  const std::vector<uint8_t> program = {
      0x45, 0x0c, 10, 0,             // +5: def_cfa r10 0
      0x4b, 0x10, 6, 2, 0x76, 0x00,  // +11: expression rbp: DW_OP_breg6 0
      0x44, 0x0f, 3, 0x76, 0x78, 0x06,  // +4: def_cfa_expression DW_OP_breg6 -8; DW_OP_deref
      0x42, 0x10, 3, 2, 0x76, 0x70,  // +2: expression rbx: DW_OP_breg6 -16
      0x48, 0x16, 12, 2, 0x76, 0x68,  // +8: val_expression r12 (not tracked)
  };
  auto rows = compile_all(one_function_eh_frame({0x0c, 7, 8, 0x90, 1}, 0x2000, 0x40, program));
  auto at = [&](uint64_t address) { return find_unwind_row(rows.data(), rows.size(), address); };
  ASSERT_NE(at(0x2000), nullptr);
  EXPECT_EQ(at(0x2000)->kind, RuleKind::cfa_rsp);
  EXPECT_EQ(at(0x2005)->kind, RuleKind::unsupported) << "CFA = r10";
  EXPECT_EQ(at(0x2010)->kind, RuleKind::unsupported);
  ASSERT_NE(at(0x2014), nullptr);
  EXPECT_EQ(at(0x2014)->kind, RuleKind::cfa_at_rbp);
  EXPECT_EQ(at(0x2014)->cfa_offset, -8);
  EXPECT_EQ(at(0x2014)->rbp(), SavedRule::at_rbp);
  EXPECT_EQ(at(0x2014)->rbp_offset(), 0);
  EXPECT_EQ(at(0x2014)->rbx(), SavedRule::same);
  EXPECT_EQ(at(0x2016)->rbx(), SavedRule::at_rbp);
  EXPECT_EQ(at(0x2016)->rbx_offset(), -16);
  EXPECT_EQ(at(0x203f)->kind, RuleKind::cfa_at_rbp);

  // Other CFA expressions stay unsupported: DW_OP_breg6 -8 without the deref, or a deref
  // of another register.
  rows = compile_all(one_function_eh_frame({0x0c, 7, 8, 0x90, 1}, 0x3000, 0x10, {0x0f, 2, 0x76, 0x78}));
  EXPECT_EQ(at(0x3000)->kind, RuleKind::unsupported);
  rows = compile_all(one_function_eh_frame({0x0c, 7, 8, 0x90, 1}, 0x3000, 0x10, {0x0f, 3, 0x77, 0x78, 0x06}));
  EXPECT_EQ(at(0x3000)->kind, RuleKind::unsupported);
  // A register saved by another expression than DW_OP_breg6 N: lost.
  rows = compile_all(one_function_eh_frame({0x0c, 7, 8, 0x90, 1}, 0x3000, 0x10, {0x10, 3, 2, 0x77, 0x70}));
  EXPECT_EQ(at(0x3000)->kind, RuleKind::cfa_rsp);
  EXPECT_EQ(at(0x3000)->rbx(), SavedRule::lost);
}

TEST(CfiCompiler, ReportsWhatWasExpected) {
  // A CIE pointer reaching before the section start.
  std::vector<uint8_t> bytes = {8, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0};
  CompileResult result;
  compile(bytes, 0x1000, &result);
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.error_offset, 4u);
  EXPECT_STREQ(result.error, "a CIE pointer inside the section");
  // A length past the end.
  bytes = {0xff, 0, 0, 0, 1, 0};
  compile(bytes, 0x1000, &result);
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.error_offset, 0u);
}

}  // namespace
}  // namespace tally::runtime
