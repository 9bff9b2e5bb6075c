#include "analyze/disassembler.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <elf.h>

#include <memory>

#define TALLY_STRINGIFY_(x) #x
#define TALLY_STRINGIFY(x) TALLY_STRINGIFY_(x)

namespace tally::analyze {

namespace {

// libcapstone is opened on first use, not linked: loading it relocates 3 MB of its tables,
// which every other command (`tally top` first) would carry in its peak memory for nothing.
struct Capstone {
  decltype(&::cs_open) open = nullptr;
  decltype(&::cs_option) option = nullptr;
  decltype(&::cs_malloc) malloc = nullptr;
  decltype(&::cs_disasm_iter) disasm_iter = nullptr;
  decltype(&::cs_free) free = nullptr;
  decltype(&::cs_close) close = nullptr;
  std::string error;  // why it could not be loaded; empty when loaded
};

template <typename Function>
bool resolve(void* library, const char* name, Function& out) {
  out = reinterpret_cast<Function>(::dlsym(library, name));
  return out != nullptr;
}

Capstone load_capstone() {
  Capstone cs;
  // The soname of the API the header describes (Debian 12: libcapstone.so.4).
  const char* soname = "libcapstone.so." TALLY_STRINGIFY(CS_API_MAJOR);
  void* library = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    cs.error = std::string("cannot load capstone (") + soname + "): " + (why ? why : "unknown");
    return cs;
  }
  if (!resolve(library, "cs_open", cs.open) || !resolve(library, "cs_option", cs.option) ||
      !resolve(library, "cs_malloc", cs.malloc) ||
      !resolve(library, "cs_disasm_iter", cs.disasm_iter) ||
      !resolve(library, "cs_free", cs.free) || !resolve(library, "cs_close", cs.close))
    cs.error = std::string(soname) + " lacks a function tally calls";
  return cs;  // the library stays loaded: its functions are used until exit
}

const Capstone& capstone() {
  static const Capstone loaded = load_capstone();
  return loaded;
}

struct Handle {
  csh handle = 0;
  ~Handle() {
    if (handle != 0) capstone().close(&handle);
  }
};

bool in_group(const cs_insn& insn, uint8_t group) {
  for (uint8_t i = 0; i < insn.detail->groups_count; ++i)
    if (insn.detail->groups[i] == group) return true;
  return false;
}

void add_x86_details(const cs_insn& insn, Instruction& out) {
  const cs_x86& x86 = insn.detail->x86;
  const bool branch = in_group(insn, CS_GRP_JUMP) || in_group(insn, CS_GRP_CALL);
  for (uint8_t i = 0; i < x86.op_count; ++i) {
    const cs_x86_op& op = x86.operands[i];
    if (branch && op.type == X86_OP_IMM) out.target = static_cast<uint64_t>(op.imm);
    if (op.type == X86_OP_MEM && op.mem.base == X86_REG_RIP && op.mem.index == X86_REG_INVALID)
      out.reference = insn.address + insn.size + static_cast<uint64_t>(op.mem.disp);
  }
}

void add_arm64_details(const cs_insn& insn, Instruction& out) {
  const cs_arm64& arm = insn.detail->arm64;
  const bool branch = in_group(insn, CS_GRP_JUMP) || in_group(insn, CS_GRP_CALL);
  for (uint8_t i = 0; i < arm.op_count; ++i)
    if (branch && arm.operands[i].type == ARM64_OP_IMM)
      out.target = static_cast<uint64_t>(arm.operands[i].imm);
}

}  // namespace

core::Expected<std::vector<Instruction>> disassemble(int machine, std::span<const uint8_t> code,
                                                     uint64_t address, AsmSyntax syntax) {
  cs_arch arch;
  cs_mode mode;
  switch (machine) {
    case EM_X86_64: arch = CS_ARCH_X86, mode = CS_MODE_64; break;
    case EM_386: arch = CS_ARCH_X86, mode = CS_MODE_32; break;
    case EM_AARCH64: arch = CS_ARCH_ARM64, mode = CS_MODE_ARM; break;
    default:
      return core::Error{"disassembly of ELF machine " + std::to_string(machine) +
                             " is not supported (x86-64, i386 and AArch64 are)",
                         core::ErrorKind::unsupported};
  }
  const Capstone& cs = capstone();
  if (!cs.error.empty()) return core::Error{cs.error, core::ErrorKind::unsupported};
  Handle h;
  if (cs.open(arch, mode, &h.handle) != CS_ERR_OK)
    return core::Error{"capstone cannot open its disassembler", core::ErrorKind::unsupported};
  if (arch == CS_ARCH_X86)
    cs.option(h.handle, CS_OPT_SYNTAX,
              syntax == AsmSyntax::intel ? CS_OPT_SYNTAX_INTEL : CS_OPT_SYNTAX_ATT);
  cs.option(h.handle, CS_OPT_DETAIL, CS_OPT_ON);
  cs.option(h.handle, CS_OPT_SKIPDATA, CS_OPT_ON);

  std::unique_ptr<cs_insn, void (*)(cs_insn*)> insn(cs.malloc(h.handle),
                                                    [](cs_insn* p) { capstone().free(p, 1); });
  if (!insn) return core::Error{"capstone: out of memory", core::ErrorKind::unsupported};
  std::vector<Instruction> out;
  const uint8_t* bytes = code.data();
  size_t size = code.size();
  uint64_t pc = address;
  while (size > 0 && cs.disasm_iter(h.handle, &bytes, &size, &pc, insn.get())) {
    Instruction& i = out.emplace_back();
    i.address = insn->address;
    i.size = insn->size;
    i.text = insn->mnemonic;
    if (insn->op_str[0] != '\0') {
      i.text += '\t';
      i.text += insn->op_str;
    }
    if (insn->id == 0) continue;  // skipped data: no details
    if (arch == CS_ARCH_X86) add_x86_details(*insn, i);
    else add_arm64_details(*insn, i);
  }
  return out;
}

}  // namespace tally::analyze
