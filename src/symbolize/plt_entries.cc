#include "symbolize/plt_entries.h"

#include <gelf.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "symbolize/elf_image.h"

namespace tally::symbolize {
namespace {

// The names of the functions whose addresses the dynamic relocations put in `wanted` GOT
// slots. .rela.plt (small) first; the big .rela.dyn (5 MB in libLLVM, mostly RELATIVE
// relocations) only for slots still unnamed, which only .plt.got entries use.
std::unordered_map<uint64_t, std::string> named_got_slots(const ElfImage& image,
                                                          const std::unordered_set<uint64_t>& wanted) {
  std::unordered_map<uint64_t, std::string> slots;
  Elf* elf = image.elf();
  size_t names_index = 0;
  if (elf_getshdrstrndx(elf, &names_index) != 0) return slots;
  for (const char* section : {".rela.plt", ".rela.dyn"}) {
    if (slots.size() == wanted.size()) break;
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr header;
      if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != SHT_RELA || header.sh_entsize == 0)
        continue;
      const char* name = elf_strptr(elf, names_index, header.sh_name);
      if (name == nullptr || std::strcmp(name, section) != 0) continue;
      Elf_Scn* symbols_scn = elf_getscn(elf, header.sh_link);
      GElf_Shdr symbols_header;
      if (symbols_scn == nullptr || gelf_getshdr(symbols_scn, &symbols_header) == nullptr) continue;
      Elf_Data* relocations = elf_getdata(scn, nullptr);
      Elf_Data* symbols = elf_getdata(symbols_scn, nullptr);
      if (relocations == nullptr || symbols == nullptr) continue;
      const size_t count = header.sh_size / header.sh_entsize;
      for (size_t i = 0; i < count; ++i) {
        GElf_Rela relocation;
        if (gelf_getrela(relocations, static_cast<int>(i), &relocation) == nullptr) break;
        const auto type = GELF_R_TYPE(relocation.r_info);
        if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
            !wanted.count(relocation.r_offset))
          continue;
        GElf_Sym symbol;
        const auto index = GELF_R_SYM(relocation.r_info);
        if (index == 0 || gelf_getsym(symbols, static_cast<int>(index), &symbol) == nullptr) continue;
        const char* symbol_name = elf_strptr(elf, symbols_header.sh_link, symbol.st_name);
        if (symbol_name != nullptr && *symbol_name != '\0') slots.emplace(relocation.r_offset, symbol_name);
      }
    }
  }
  return slots;
}

// The GOT slot an entry jumps through: `jmp *disp32(%rip)` (ff 25) at its start, maybe
// after endbr64 (f3 0f 1e fa) and with a bnd prefix (f2); 0 when the entry holds no such
// jump (only those places are looked at: other instructions' bytes can read "ff 25").
uint64_t jump_slot(const uint8_t* entry, size_t size, uint64_t address) {
  for (size_t at : {0u, 1u, 4u, 5u}) {
    if (at + 6 > size || entry[at] != 0xff || entry[at + 1] != 0x25) continue;
    int32_t displacement;
    std::memcpy(&displacement, entry + at + 2, sizeof displacement);
    return address + at + 6 + static_cast<uint64_t>(static_cast<int64_t>(displacement));
  }
  return 0;
}

}  // namespace

std::vector<PltEntry> read_plt_entries(const ElfImage& image, const std::vector<uint64_t>* needed) {
  std::vector<PltEntry> entries;
  GElf_Ehdr header;
  if (gelf_getehdr(image.elf(), &header) == nullptr || header.e_machine != EM_X86_64 ||
      image.byte_order() != std::endian::little)
    return entries;
  // Each entry's slot first, then the names of just those slots.
  std::vector<PltEntry> candidates;
  std::vector<uint64_t> candidate_slots;
  std::unordered_set<uint64_t> wanted;
  for (auto [section, entry_size] : {std::pair{".plt", 16u}, {".plt.sec", 16u}, {".plt.got", 8u}}) {
    auto data = image.section_data(section);
    if (!data) continue;
    const uint64_t end = data->address + data->bytes.size();
    if (needed != nullptr && std::strcmp(section, ".plt.got") == 0 &&
        std::none_of(needed->begin(), needed->end(),
                     [&](uint64_t a) { return a >= data->address && a < end; }))
      continue;
    for (size_t offset = 0; offset + entry_size <= data->bytes.size(); offset += entry_size) {
      const uint64_t address = data->address + offset;
      const uint64_t slot = jump_slot(data->bytes.data() + offset, entry_size, address);
      if (slot == 0) continue;
      candidates.push_back({address, entry_size, ""});
      candidate_slots.push_back(slot);
      wanted.insert(slot);
    }
  }
  if (candidates.empty()) return entries;
  const auto slots = named_got_slots(image, wanted);
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto named = slots.find(candidate_slots[i]);
    if (named == slots.end()) continue;  // the resolver entry, or an unnamed slot
    candidates[i].name = named->second + "@plt";
    entries.push_back(std::move(candidates[i]));
  }
  std::sort(entries.begin(), entries.end(),
            [](const PltEntry& a, const PltEntry& b) { return a.address < b.address; });
  return entries;
}

}  // namespace tally::symbolize
