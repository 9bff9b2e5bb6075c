#include "collect/unwind_elf_cache.h"

#include <dwarf.h>
#include <elf.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace tally::collect {

namespace {

// has_cfi() memoizes per address; a runaway table (random addresses from a corrupt stack
// that happen to fall in a module) is simply started over.
constexpr size_t kMaxMemoizedAddresses = 1 << 16;

uint64_t page_size() {
  static const uint64_t size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// This process's vdso as an ELF image (its headers say how long it is), or empty.
std::vector<uint8_t> copy_own_vdso() {
  const auto* base = reinterpret_cast<const uint8_t*>(getauxval(AT_SYSINFO_EHDR));
  if (base == nullptr) return {};
  Elf64_Ehdr header;
  std::memcpy(&header, base, sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
    return {};
  uint64_t size = header.e_shoff + uint64_t{header.e_shnum} * header.e_shentsize;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, base + header.e_phoff + uint64_t{i} * sizeof segment, sizeof segment);
    if (segment.p_type == PT_LOAD && segment.p_offset + segment.p_filesz > size)
      size = segment.p_offset + segment.p_filesz;
  }
  if (size < sizeof header || size > (1u << 20)) return {};  // a vdso is a few pages
  return std::vector<uint8_t>(base, base + size);
}

}  // namespace

UnwindElf::UnwindElf(std::unique_ptr<symbolize::ElfImage> image)
    : image_(std::move(image)),
      segments_(image_->load_segments()),
      is_exec_(image_->is_exec()),
      has_debug_frame_(image_->has_section(".debug_frame", true)) {
  // libdwfl places a module by its first PT_LOAD's address rounded down to the segment's
  // alignment (dwfl_module_getdwarf.c open_elf): the same arithmetic, so that the bias it
  // derives from the module's start is the one computed here.
  if (!segments_.empty()) {
    link_low_ = segments_.front().vaddr & (0 - segments_.front().align);
    for (const auto& segment : segments_)
      link_high_ = std::max(link_high_, segment.vaddr + std::max(segment.memsz, segment.filesz));
  }
  size_t size = 0;
  bytes_ = reinterpret_cast<const uint8_t*>(elf_rawfile(image_->elf(), &size));
  size_ = bytes_ != nullptr ? size : 0;
}

UnwindElf::~UnwindElf() {
  if (eh_cfi_ != nullptr) dwarf_cfi_end(eh_cfi_);
}

std::optional<uint64_t> UnwindElf::bias_of(const ImageMapping& mapping) const {
  auto link = symbolize::link_time_address(segments_, is_exec_, mapping.start, mapping.pgoff,
                                           mapping.start);
  if (!link) return std::nullopt;
  return mapping.start - *link;
}

std::optional<uint64_t> UnwindElf::read_only_word(uint64_t link_address) const {
  for (const auto& segment : segments_) {
    if (segment.writable || link_address < segment.vaddr ||
        link_address - segment.vaddr + 8 > segment.filesz)
      continue;
    uint64_t offset = segment.offset + (link_address - segment.vaddr);
    if (offset + 8 > size_ || offset + 8 < offset) return std::nullopt;
    uint64_t word;
    std::memcpy(&word, bytes_ + offset, sizeof word);
    return word;
  }
  return std::nullopt;
}

Dwarf_CFI* UnwindElf::eh_cfi() {
  if (!eh_cfi_tried_) {
    eh_cfi_tried_ = true;
    eh_cfi_ = dwarf_getcfi_elf(image_->elf());
  }
  return eh_cfi_;
}

CfaRule UnwindElf::cfa_rule(uint64_t link_address) {
  constexpr Dwarf_Word kDwarfStackPointer = 7;  // x86-64's rsp
  Dwarf_CFI* cfi = eh_cfi();
  Dwarf_Frame* frame = nullptr;
  if (cfi == nullptr || dwarf_cfi_addrframe(cfi, link_address, &frame) != 0) return {};
  CfaRule rule{.kind = CfaRule::Kind::other};
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  bool signal = false;
  // libdw gives "register + offset" as one DW_OP_bregx (register, offset).
  if (dwarf_frame_info(frame, nullptr, nullptr, &signal) >= 0 && !signal &&
      dwarf_frame_cfa(frame, &ops, &count) == 0 && count == 1 && ops[0].atom == DW_OP_bregx &&
      ops[0].number == kDwarfStackPointer) {
    rule.kind = CfaRule::Kind::stack_pointer;
    rule.offset = static_cast<int64_t>(ops[0].number2);
  }
  std::free(frame);
  return rule;
}

bool UnwindElf::has_cfi(uint64_t link_address) {
  if (auto it = cfi_at_.find(link_address); it != cfi_at_.end()) return it->second;
  Dwarf_CFI* cfi = eh_cfi();
  bool found = has_debug_frame_;
  Dwarf_Frame* frame = nullptr;
  if (!found && cfi != nullptr && dwarf_cfi_addrframe(cfi, link_address, &frame) == 0) {
    found = true;
    std::free(frame);
  }
  if (cfi_at_.size() >= kMaxMemoizedAddresses) cfi_at_.clear();
  cfi_at_.emplace(link_address, found);
  return found;
}

std::shared_ptr<UnwindElf> UnwindElfCache::get(const ImageMapping& mapping, pid_t pid) {
  if (mapping.path == "[vdso]") return vdso(mapping);
  if (mapping.path.empty() || mapping.path.front() != '/') return nullptr;  // anonymous, [heap]...
  std::string key = mapping.build_id.empty()
                        ? mapping.path + '\n' + std::to_string(mapping.dev_major) + ':' +
                              std::to_string(mapping.dev_minor) + ':' +
                              std::to_string(mapping.inode)
                        : mapping.build_id;
  auto [it, inserted] = files_.try_emplace(key);
  if (inserted) {
    it->second = open(mapping, pid);
    if (it->second)
      ++stats_.opened;
    else
      ++stats_.missing;
  }
  return it->second;
}

std::shared_ptr<UnwindElf> UnwindElfCache::open(const ImageMapping& mapping, pid_t pid) {
  // The path as the process sees it; a process in another mount namespace (a container)
  // has it under its own root.
  std::vector<std::string> candidates{mapping.path};
  if (pid > 0) candidates.push_back("/proc/" + std::to_string(pid) + "/root" + mapping.path);
  for (const auto& path : candidates) {
    auto image = symbolize::ElfImage::open(path);
    if (!image) continue;
    if (!mapping.build_id.empty() && image->build_id() != mapping.build_id) continue;
    return std::make_shared<UnwindElf>(std::move(image));
  }
  return nullptr;
}

std::shared_ptr<UnwindElf> UnwindElfCache::vdso(const ImageMapping& mapping) {
  if (!vdso_tried_) {
    vdso_tried_ = true;
    auto image = symbolize::ElfImage::from_memory(copy_own_vdso(), "[vdso]");
    if (image) {
      vdso_ = std::make_shared<UnwindElf>(std::move(image));
      ++stats_.opened;
    } else {
      ++stats_.missing;
    }
  }
  if (!vdso_) return nullptr;
  // Every 64-bit process of this kernel maps the same image; one of another size (a
  // 32-bit process's vdso) is not the one we hold.
  uint64_t length = mapping.limit - mapping.start;
  uint64_t ours = (vdso_->link_high() - vdso_->link_low() + page_size() - 1) & ~(page_size() - 1);
  if (length != ours) return nullptr;
  return vdso_;
}

void UnwindElfCache::trim(size_t keep) {
  if (files_.size() <= keep) return;
  for (auto it = files_.begin(); it != files_.end();) {
    if (!it->second || it->second.use_count() == 1)
      it = files_.erase(it);
    else
      ++it;
  }
}

}  // namespace tally::collect
