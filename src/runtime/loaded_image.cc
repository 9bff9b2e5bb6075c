#include "runtime/loaded_image.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstring>

namespace tally::runtime {

namespace {

struct Search {
  uint64_t address;
  std::optional<LoadedImage> found;
};

// The GNU build id among the notes of a PT_NOTE segment, in hex.
std::string build_id_in(const unsigned char* notes, size_t size) {
  size_t at = 0;
  while (at + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) note;
    std::memcpy(&note, notes + at, sizeof note);
    const size_t name_at = at + sizeof note;
    const size_t desc_at = name_at + ((note.n_namesz + 3u) & ~size_t{3});
    const size_t next = desc_at + ((note.n_descsz + 3u) & ~size_t{3});
    if (next > size || next <= at) break;
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
        std::memcmp(notes + name_at, "GNU", 4) == 0) {
      static constexpr char kHex[] = "0123456789abcdef";
      std::string hex;
      for (size_t i = 0; i < note.n_descsz; ++i) {
        hex += kHex[notes[desc_at + i] >> 4];
        hex += kHex[notes[desc_at + i] & 15];
      }
      return hex;
    }
    at = next;
  }
  return {};
}

int visit(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  const ElfW(Phdr)* holder = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uint64_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && search->address >= start && search->address - start < ph.p_memsz)
      holder = &ph;
  }
  if (holder == nullptr) return 0;
  LoadedImage image;
  image.file_offset = holder->p_offset + (search->address - (info->dlpi_addr + holder->p_vaddr));
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
    image.path = info->dlpi_name;
  } else {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) image.path.assign(exe, static_cast<size_t>(n));
  }
  for (ElfW(Half) i = 0; i < info->dlpi_phnum && image.build_id.empty(); ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_NOTE)
      image.build_id = build_id_in(
          reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr), ph.p_memsz);
  }
  search->found = std::move(image);
  return 1;
}

}  // namespace

std::optional<LoadedImage> find_loaded_image(uint64_t address) {
  Search search{address, std::nullopt};
  dl_iterate_phdr(visit, &search);
  return search.found;
}

}  // namespace tally::runtime
