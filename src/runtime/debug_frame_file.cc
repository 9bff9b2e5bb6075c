#include "runtime/debug_frame_file.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tally::runtime {
namespace {

bool within(size_t file_size, uint64_t offset, uint64_t length) {
  return offset <= file_size && length <= file_size - offset;
}

}  // namespace

bool map_debug_frame(const char* path, MappedDebugFrame* out) {
  *out = MappedDebugFrame{};
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat status;
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) ||
      static_cast<uint64_t>(status.st_size) < sizeof(Elf64_Ehdr)) {
    close(fd);
    return false;
  }
  size_t file_size = static_cast<size_t>(status.st_size);
  void* mapping = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED) return false;
  const auto* file = static_cast<const uint8_t*>(mapping);
  auto fail = [&] {
    munmap(mapping, file_size);
    return false;
  };
  Elf64_Ehdr header;
  memcpy(&header, file, sizeof header);
  if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_machine != EM_X86_64 ||
      header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 ||
      header.e_shstrndx >= header.e_shnum ||
      !within(file_size, header.e_shoff, uint64_t{header.e_shnum} * sizeof(Elf64_Shdr))) {
    return fail();
  }
  auto section = [&](size_t index) {
    Elf64_Shdr entry;
    memcpy(&entry, file + header.e_shoff + index * sizeof(Elf64_Shdr), sizeof entry);
    return entry;
  };
  Elf64_Shdr names = section(header.e_shstrndx);
  if (names.sh_type == SHT_NOBITS || !within(file_size, names.sh_offset, names.sh_size)) return fail();
  static constexpr char kName[] = ".debug_frame";
  for (size_t i = 1; i < header.e_shnum; ++i) {
    Elf64_Shdr entry = section(i);
    if (entry.sh_name >= names.sh_size || names.sh_size - entry.sh_name < sizeof kName) continue;
    if (memcmp(file + names.sh_offset + entry.sh_name, kName, sizeof kName) != 0) continue;
    // SHT_NOBITS: a stripped file's placeholder; SHF_COMPRESSED: not inflated here.
    if (entry.sh_type == SHT_NOBITS || (entry.sh_flags & SHF_COMPRESSED) != 0 || entry.sh_size == 0 ||
        !within(file_size, entry.sh_offset, entry.sh_size)) {
      return fail();
    }
    *out = MappedDebugFrame{mapping, file_size, file + entry.sh_offset, entry.sh_size};
    return true;
  }
  return fail();
}

void unmap_debug_frame(MappedDebugFrame* mapped) {
  if (mapped->mapping != nullptr) munmap(mapped->mapping, mapped->mapped_bytes);
  *mapped = MappedDebugFrame{};
}

}  // namespace tally::runtime
