#include "symbolize/plt_entries.h"

#include <gelf.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "symbolize/elf_image.h"

namespace tally::symbolize {
namespace {

// The GOT slots the dynamic relocations fill with a function's address, and its name.
std::unordered_map<uint64_t, std::string> named_got_slots(const ElfImage& image) {
  std::unordered_map<uint64_t, std::string> slots;
  Elf* elf = image.elf();
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != SHT_RELA || header.sh_entsize == 0)
      continue;
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
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      GElf_Sym symbol;
      const auto index = GELF_R_SYM(relocation.r_info);
      if (index == 0 || gelf_getsym(symbols, static_cast<int>(index), &symbol) == nullptr) continue;
      const char* name = elf_strptr(elf, symbols_header.sh_link, symbol.st_name);
      if (name != nullptr && *name != '\0') slots.emplace(relocation.r_offset, name);
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

std::vector<PltEntry> read_plt_entries(const ElfImage& image) {
  std::vector<PltEntry> entries;
  GElf_Ehdr header;
  if (gelf_getehdr(image.elf(), &header) == nullptr || header.e_machine != EM_X86_64 ||
      image.byte_order() != std::endian::little)
    return entries;
  const auto slots = named_got_slots(image);
  if (slots.empty()) return entries;
  for (auto [section, entry_size] : {std::pair{".plt", 16u}, {".plt.sec", 16u}, {".plt.got", 8u}}) {
    auto data = image.section_data(section);
    if (!data) continue;
    for (size_t offset = 0; offset + entry_size <= data->bytes.size(); offset += entry_size) {
      const uint64_t address = data->address + offset;
      const uint64_t slot = jump_slot(data->bytes.data() + offset, entry_size, address);
      auto named = slots.find(slot);
      if (named == slots.end()) continue;  // the resolver entry, or an unnamed slot
      entries.push_back({address, entry_size, named->second + "@plt"});
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const PltEntry& a, const PltEntry& b) { return a.address < b.address; });
  return entries;
}

}  // namespace tally::symbolize
