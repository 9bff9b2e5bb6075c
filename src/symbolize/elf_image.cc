#include "symbolize/elf_image.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>

namespace tally::symbolize {

namespace {

// libelf needs its version set once per process before any elf_begin.
void init_libelf() {
  static const bool done = [] {
    elf_version(EV_CURRENT);
    return true;
  }();
  (void)done;
}

}  // namespace

std::unique_ptr<ElfImage> ElfImage::open(const std::string& path, Access access) {
  init_libelf();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  Elf* elf = elf_begin(fd, access == Access::map ? ELF_C_READ_MMAP : ELF_C_READ, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    if (elf != nullptr) elf_end(elf);
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<ElfImage>(new ElfImage(fd, elf, path));
}

std::unique_ptr<ElfImage> ElfImage::from_memory(std::vector<uint8_t> bytes, std::string name) {
  init_libelf();
  if (bytes.empty()) return nullptr;
  Elf* elf = elf_memory(reinterpret_cast<char*>(bytes.data()), bytes.size());
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    if (elf != nullptr) elf_end(elf);
    return nullptr;
  }
  std::unique_ptr<ElfImage> image(new ElfImage(-1, elf, std::move(name)));
  image->bytes_ = std::move(bytes);  // the vector's heap buffer does not move
  return image;
}

ElfImage::~ElfImage() {
  elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
}

std::string ElfImage::build_id() const {
  const void* bytes = nullptr;
  ssize_t size = dwelf_elf_gnu_build_id(elf_, &bytes);
  if (size <= 0) return {};
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (ssize_t i = 0; i < size; ++i) {
    hex += digits[p[i] >> 4];
    hex += digits[p[i] & 15];
  }
  return hex;
}

std::string ElfImage::debuglink() const {
  GElf_Word crc = 0;
  const char* name = dwelf_elf_gnu_debuglink(elf_, &crc);
  return name != nullptr ? name : "";
}

bool ElfImage::has_section(const char* wanted, bool with_bits) const {
  return find_section(wanted, with_bits).has_value();
}

std::optional<GElf_Shdr> ElfImage::section_header(const char* wanted) const {
  return find_section(wanted, true);
}

std::optional<GElf_Shdr> ElfImage::find_section(const char* wanted, bool with_bits) const {
  size_t names_index = 0;
  if (elf_getshdrstrndx(elf_, &names_index) != 0) return std::nullopt;
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    const char* name = elf_strptr(elf_, names_index, header.sh_name);
    if (name == nullptr || std::strcmp(name, wanted) != 0) continue;
    if (!with_bits || header.sh_type != SHT_NOBITS) return header;
  }
  return std::nullopt;
}

std::optional<ElfImage::SectionData> ElfImage::section_data(const char* wanted,
                                                            std::span<const uint8_t> file) const {
  size_t names_index = 0;
  if (elf_getshdrstrndx(elf_, &names_index) != 0) return std::nullopt;
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type == SHT_NOBITS) continue;
    const char* name = elf_strptr(elf_, names_index, header.sh_name);
    if (name == nullptr || std::strcmp(name, wanted) != 0) continue;
    if ((header.sh_flags & SHF_COMPRESSED) == 0 && header.sh_offset <= file.size() &&
        header.sh_size <= file.size() - header.sh_offset) {
      return SectionData{file.subspan(header.sh_offset, header.sh_size), header.sh_addr};
    }
    if ((header.sh_flags & SHF_COMPRESSED) != 0 && elf_compress(scn, 0, 0) < 0) return std::nullopt;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) return std::nullopt;
    return SectionData{{static_cast<const uint8_t*>(data->d_buf), data->d_size}, header.sh_addr};
  }
  return std::nullopt;
}

unsigned ElfImage::address_size() const {
  const char* ident = elf_getident(elf_, nullptr);
  return ident != nullptr && ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
}

std::endian ElfImage::byte_order() const {
  const char* ident = elf_getident(elf_, nullptr);
  return ident != nullptr && ident[EI_DATA] == ELFDATA2MSB ? std::endian::big : std::endian::little;
}

bool ElfImage::has_compressed_dwarf() const {
  auto header = section_header(".debug_info");
  return header && (header->sh_flags & SHF_COMPRESSED) != 0;
}

// A stripped file keeps section headers for .debug_info only as NOBITS in debug files'
// counterparts; what matters is that the bits are here.
bool ElfImage::has_dwarf() const { return has_section(".debug_info", true); }
bool ElfImage::has_symtab() const { return has_section(".symtab", true); }

bool ElfImage::is_exec() const {
  GElf_Ehdr header;
  return gelf_getehdr(elf_, &header) != nullptr && header.e_type == ET_EXEC;
}

std::vector<LoadSegment> ElfImage::load_segments() const {
  std::vector<LoadSegment> segments;
  size_t count = 0;
  if (elf_getphdrnum(elf_, &count) != 0) return segments;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr header;
    if (gelf_getphdr(elf_, static_cast<int>(i), &header) == nullptr || header.p_type != PT_LOAD)
      continue;
    segments.push_back({header.p_offset, header.p_vaddr, header.p_filesz, header.p_align,
                        (header.p_flags & PF_X) != 0, header.p_memsz,
                        (header.p_flags & PF_W) != 0});
  }
  return segments;
}

std::optional<uint64_t> link_time_address(const std::vector<LoadSegment>& segments, bool is_exec,
                                          uint64_t start, uint64_t offset, uint64_t address) {
  if (start == 0) return address;
  // The kernel maps whole pages: a segment's mapping starts at its offset rounded down.
  auto holds = [](const LoadSegment& s, uint64_t file_offset) {
    uint64_t page = s.align > 1 ? s.align : 1;
    if (page > 0x10000) page = 0x1000;  // huge alignments still map at page granularity
    uint64_t first = s.offset & ~(page - 1);
    return file_offset >= first && file_offset < s.offset + s.filesz;
  };
  const LoadSegment* chosen = nullptr;
  // The segment holding the mapping's own offset decides the bias of the whole mapping
  // (the mapping is one contiguous piece of the file); an executable one wins a tie.
  for (const auto& s : segments) {
    if (holds(s, offset) && (chosen == nullptr || (s.executable && !chosen->executable)))
      chosen = &s;
  }
  if (chosen == nullptr) {
    uint64_t file_offset = address - start + offset;
    for (const auto& s : segments) {
      if (holds(s, file_offset)) {
        chosen = &s;
        break;
      }
    }
  }
  if (chosen == nullptr) {
    // A non-PIE executable mapped where it was linked needs no segment to place it.
    if (is_exec) return address;
    return std::nullopt;
  }
  return address - start + offset - chosen->offset + chosen->vaddr;
}

}  // namespace tally::symbolize
