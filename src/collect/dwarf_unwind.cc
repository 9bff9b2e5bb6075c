#include "collect/dwarf_unwind.h"

#include <elfutils/libdwfl.h>
#include <linux/perf_event.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_map>

#include "collect/unwind_elf_cache.h"

namespace tally::collect {

namespace {

// x86-64 DWARF registers 0-16 (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, and the
// return address column, rip) as indices of perf's sampled register array.
constexpr std::array<int, 17> kPerfRegisterOfDwarf = {
    PERF_REG_X86_AX,  PERF_REG_X86_DX,  PERF_REG_X86_CX,  PERF_REG_X86_BX,  PERF_REG_X86_SI,
    PERF_REG_X86_DI,  PERF_REG_X86_BP,  PERF_REG_X86_SP,  PERF_REG_X86_R8,  PERF_REG_X86_R9,
    PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14,
    PERF_REG_X86_R15, PERF_REG_X86_IP};
constexpr unsigned kDwarfStackPointer = 7;
// Files no process maps any more stay open up to this many, for the next process that
// maps them (short-lived processes of a system-wide recording come and go).
constexpr size_t kUnusedFilesKept = 256;

// One ELF file as one process mapped it.
struct Module {
  std::shared_ptr<UnwindElf> elf;
  uint64_t bias = 0;
  uint64_t low = 0;   // runtime addresses
  uint64_t high = 0;
  bool operator==(const Module& other) const { return elf == other.elf && bias == other.bias; }
};

// What the unwinder keeps per process: its modules, and the Dwfl built from them with the
// thread-state callbacks attached (its per-module CFI caches live as long as the maps do).
struct ProcessUnwind {
  pid_t pid = 0;
  uint64_t generation = 0;
  std::vector<Module> modules;  // by address, not overlapping
  Dwfl* dwfl = nullptr;
  bool attached = false;

  // The sample being unwound, for the callbacks.
  const UserRegs* regs = nullptr;
  std::span<const uint8_t> stack;
  uint64_t stack_start = 0;
  // Reads that failed since the last frame was found: libdw takes an unreadable return
  // address for the end of the stack, so these tell a cut-off walk from a complete one.
  bool read_failed = false;
  bool read_past_stack = false;  // one of them was beyond the end of the copy

  ProcessUnwind() = default;
  ProcessUnwind(const ProcessUnwind&) = delete;
  ProcessUnwind& operator=(const ProcessUnwind&) = delete;
  ~ProcessUnwind() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }

  const Module* module_at(uint64_t address) const {
    auto it = std::upper_bound(modules.begin(), modules.end(), address,
                               [](uint64_t a, const Module& m) { return a < m.low; });
    if (it == modules.begin()) return nullptr;
    --it;
    return address < it->high ? &*it : nullptr;
  }
};

// --- Dwfl callbacks: modules come from our cache, threads and memory from the sample ---

int find_elf(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, char**, Elf** elf) {
  // A new reference to the cached handle (libelf counts them; dwfl_end drops its own).
  *elf = elf_begin(-1, ELF_C_READ_MMAP, static_cast<UnwindElf*>(*userdata)->elf());
  return -1;
}

// Separate debug files are not looked for: .eh_frame is in the binaries themselves.
int no_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*,
                 GElf_Word, char**) {
  return -1;
}

const Dwfl_Callbacks kModuleCallbacks = {find_elf, no_debuginfo, dwfl_offline_section_address,
                                         nullptr};

pid_t next_thread(Dwfl*, void* process, void** thread) {
  if (*thread != nullptr) return 0;
  *thread = process;
  return std::max<pid_t>(static_cast<ProcessUnwind*>(process)->pid, 1);
}

bool get_thread(Dwfl*, pid_t, void* process, void** thread) {
  *thread = process;
  return true;
}

bool memory_read(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* arg) {
  auto* process = static_cast<ProcessUnwind*>(arg);
  uint64_t offset = address - process->stack_start;
  if (address >= process->stack_start && offset < process->stack.size() &&
      process->stack.size() - offset >= sizeof *result) {
    std::memcpy(result, process->stack.data() + offset, sizeof *result);
    return true;
  }
  // Constant data in a mapped file (rare in CFI expressions, but legal).
  if (const Module* module = process->module_at(address)) {
    if (auto word = module->elf->read_only_word(address - module->bias)) {
      *result = *word;
      return true;
    }
  }
  process->read_failed = true;
  if (address >= process->stack_start) process->read_past_stack = true;  // above sp: past the copy
  return false;
}

bool set_initial_registers(Dwfl_Thread* thread, void* arg) {
  const UserRegs& regs = *static_cast<ProcessUnwind*>(arg)->regs;
  std::array<Dwarf_Word, kPerfRegisterOfDwarf.size()> dwarf;
  for (size_t i = 0; i < dwarf.size(); ++i) dwarf[i] = regs.value[kPerfRegisterOfDwarf[i]];
  return dwfl_thread_state_registers(thread, 0, dwarf.size(), dwarf.data());
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {next_thread, get_thread, memory_read,
                                                set_initial_registers, nullptr, nullptr};

// One walk down one sample's stack.
struct Walk {
  ProcessUnwind* process = nullptr;
  std::vector<uint64_t>* pcs = nullptr;
  size_t max_frames = 0;
  size_t count = 0;
  uint64_t last_pc = 0;
  uint64_t last_sp = 0;
  bool last_sp_known = false;
  bool stopped_early = false;  // the walk ended it (frame limit, no progress), not libdw
  uint64_t frame_pointer_steps = 0;
};

int on_frame(Dwfl_Frame* frame, void* arg) {
  auto* walk = static_cast<Walk*>(arg);
  Dwarf_Addr pc = 0;
  if (!dwfl_frame_pc(frame, &pc, nullptr)) return DWARF_CB_ABORT;
  Dwarf_Word sp = 0;
  bool sp_known = dwfl_frame_reg(frame, kDwarfStackPointer, &sp) == 0;
  if (walk->count > 0) {
    // Every caller's frame is above its callee's: a step that does not move up is a loop
    // (garbage registers, a corrupt stack), and would repeat until the frame limit.
    if (sp_known && walk->last_sp_known && sp <= walk->last_sp) {
      walk->stopped_early = true;
      return DWARF_CB_ABORT;
    }
    // libdw steps by the frame pointer where the previous frame had no CFI.
    uint64_t previous = walk->count == 1 ? walk->last_pc : walk->last_pc - 1;
    const Module* module = walk->process->module_at(previous);
    if (module == nullptr || !module->elf->has_cfi(previous - module->bias))
      ++walk->frame_pointer_steps;
  }
  walk->pcs->push_back(pc);
  walk->process->read_failed = false;
  walk->process->read_past_stack = false;
  walk->last_pc = pc;
  walk->last_sp = sp;
  walk->last_sp_known = sp_known;
  if (++walk->count >= walk->max_frames) {
    walk->stopped_early = true;
    return DWARF_CB_ABORT;
  }
  return DWARF_CB_OK;
}

// The modules of a process: each executable mapping of a readable ELF at its load bias,
// one module per file and bias (a file's text may be mapped in several pieces).
std::vector<Module> modules_of(const AddressSpace& maps, pid_t pid, UnwindElfCache& files) {
  std::vector<Module> modules;
  for (const ImageMapping* mapping : maps.all()) {
    if (!mapping->executable) continue;
    auto elf = files.get(*mapping, pid);
    if (!elf) continue;
    auto bias = elf->bias_of(*mapping);
    if (!bias) continue;
    Module module{elf, *bias, *bias + elf->link_low(), *bias + elf->link_high()};
    if (module.high <= module.low) continue;
    if (std::find(modules.begin(), modules.end(), module) == modules.end())
      modules.push_back(std::move(module));
  }
  std::sort(modules.begin(), modules.end(),
            [](const Module& a, const Module& b) { return a.low < b.low; });
  // Overlapping modules (a file mapped over another's range) would confuse the address
  // lookup: the first one keeps its range.
  std::vector<Module> kept;
  for (auto& module : modules) {
    if (!kept.empty() && module.low < kept.back().high) continue;
    kept.push_back(std::move(module));
  }
  return kept;
}

void build_dwfl(ProcessUnwind& process) {
  if (process.dwfl != nullptr) dwfl_end(process.dwfl);
  process.attached = false;
  process.dwfl = dwfl_begin(&kModuleCallbacks);
  if (process.dwfl == nullptr) return;
  dwfl_report_begin(process.dwfl);
  for (const Module& module : process.modules) {
    Dwfl_Module* reported =
        dwfl_report_module(process.dwfl, module.elf->path().c_str(), module.low, module.high);
    if (reported == nullptr) continue;
    void** userdata = nullptr;
    dwfl_module_info(reported, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    *userdata = module.elf.get();
  }
  dwfl_report_end(process.dwfl, nullptr, nullptr);
  if (process.modules.empty()) return;  // nothing to tell the architecture by, nor to unwind
  process.attached = dwfl_attach_state(process.dwfl, process.modules.front().elf->elf(),
                                       std::max<pid_t>(process.pid, 1), &kThreadCallbacks,
                                       &process);
}

}  // namespace

struct DwarfUnwinder::State {
  UnwindElfCache files;
  std::unordered_map<pid_t, std::unique_ptr<ProcessUnwind>> processes;

  ProcessUnwind& process(pid_t pid, const AddressSpace& maps, UnwindStats& stats) {
    auto& slot = processes[pid];
    if (!slot) {
      slot = std::make_unique<ProcessUnwind>();
      slot->pid = pid;
    } else if (slot->dwfl != nullptr && slot->generation == maps.generation()) {
      return *slot;
    }
    slot->generation = maps.generation();
    auto modules = modules_of(maps, pid, files);
    stats.images_opened = files.stats().opened;
    stats.images_missing = files.stats().missing;
    // Maps that changed elsewhere (data, stacks) leave the Dwfl and its CFI caches as they are.
    if (slot->dwfl != nullptr && modules == slot->modules) return *slot;
    slot->modules = std::move(modules);
    build_dwfl(*slot);
    ++stats.rebuilds;
    return *slot;
  }
};

DwarfUnwinder::DwarfUnwinder() : state_(std::make_unique<State>()) {}
DwarfUnwinder::~DwarfUnwinder() = default;

void DwarfUnwinder::unwind(pid_t pid, const AddressSpace& maps, const UserRegs& regs,
                           std::span<const uint8_t> stack, std::vector<uint64_t>& pcs,
                           size_t max_frames) {
  ++stats_.samples;
  // A kernel thread has no user registers; a 32-bit process is not unwound (its vdso and
  // register set differ) beyond the sampled address.
  if (max_frames == 0 || regs.abi == PERF_SAMPLE_REGS_ABI_NONE) return;
  ProcessUnwind* process = nullptr;
  if (regs.abi == PERF_SAMPLE_REGS_ABI_64 && max_frames > 1)
    process = &state_->process(pid, maps, stats_);
  if (process == nullptr || !process->attached) {
    pcs.push_back(regs.ip());
    ++stats_.frames;
    ++stats_.truncated;
    return;
  }
  process->regs = &regs;
  process->stack = stack;
  process->stack_start = regs.sp();
  process->read_failed = false;
  process->read_past_stack = false;
  Walk walk;
  walk.process = process;
  walk.pcs = &pcs;
  walk.max_frames = max_frames;
  int result = dwfl_getthread_frames(process->dwfl, std::max<pid_t>(pid, 1), on_frame, &walk);
  if (walk.count == 0) {  // libdw refused the registers: keep at least the sampled address
    pcs.push_back(regs.ip());
    walk.count = 1;
  }
  stats_.frames += walk.count;
  stats_.frame_pointer_steps += walk.frame_pointer_steps;
  if (result != 0 || process->read_failed) {
    ++stats_.truncated;
    if (!walk.stopped_early && process->read_past_stack) ++stats_.stack_ended;
  }
  process->regs = nullptr;
  process->stack = {};
}

void DwarfUnwinder::forget(pid_t pid) {
  state_->processes.erase(pid);
  state_->files.trim(kUnusedFilesKept);
}

}  // namespace tally::collect
