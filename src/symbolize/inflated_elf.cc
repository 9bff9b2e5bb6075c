#include "symbolize/inflated_elf.h"

#include <elf.h>
#include <libdeflate.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "io/input.h"
#include "symbolize/run_parallel.h"

namespace tally::symbolize {

namespace {

// Sections no libdw call of the symbolizer reads: emptied rather than inflated.
bool is_unread_debug_section(std::string_view name) {
  static constexpr std::string_view kUnread[] = {
      ".debug_loc",      ".debug_loclists",     ".debug_frame",        ".debug_macro",
      ".debug_macinfo",  ".debug_pubnames",     ".debug_pubtypes",     ".debug_gnu_pubnames",
      ".debug_gnu_pubtypes", ".debug_names"};
  return std::find(std::begin(kUnread), std::end(kUnread), name) != std::end(kUnread);
}

// deflate cannot shrink data by more than about 1032:1: a larger claim is corrupt.
constexpr uint64_t kMaxInflateRatio = 1032;

template <class T>
T read_at(std::span<const uint8_t> bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

struct Section {
  Elf64_Shdr header;       // as written into the new image
  uint64_t source = 0;     // where its bytes (or its compressed stream) start in the file
  uint64_t source_size = 0;
  bool inflate = false;
};

// The sections' new headers and where their bytes come from; nullopt when the file is not
// one this reader lays out again.
std::optional<std::vector<Section>> plan(std::span<const uint8_t> file, const Elf64_Ehdr& ehdr) {
  const uint64_t size = file.size();
  if (ehdr.e_shoff == 0 || ehdr.e_shentsize != sizeof(Elf64_Shdr) || ehdr.e_shoff > size)
    return std::nullopt;
  auto header_at = [&](uint64_t index) -> std::optional<Elf64_Shdr> {
    if (index > size / sizeof(Elf64_Shdr)) return std::nullopt;
    const uint64_t at = ehdr.e_shoff + index * sizeof(Elf64_Shdr);
    if (at + sizeof(Elf64_Shdr) > size) return std::nullopt;
    return read_at<Elf64_Shdr>(file, at);
  };
  auto first = header_at(0);
  if (!first) return std::nullopt;
  const uint64_t count = ehdr.e_shnum != 0 ? ehdr.e_shnum : first->sh_size;
  const uint64_t names_index = ehdr.e_shstrndx != SHN_XINDEX ? ehdr.e_shstrndx : first->sh_link;
  if (count == 0 || count > (size - ehdr.e_shoff) / sizeof(Elf64_Shdr) || names_index >= count)
    return std::nullopt;
  const Elf64_Shdr names = *header_at(names_index);
  if (names.sh_type != SHT_STRTAB || (names.sh_flags & SHF_COMPRESSED) != 0 ||
      names.sh_offset > size || names.sh_size > size - names.sh_offset || names.sh_size == 0 ||
      file[names.sh_offset + names.sh_size - 1] != 0)
    return std::nullopt;
  const char* name_table = reinterpret_cast<const char*>(file.data() + names.sh_offset);

  std::vector<Section> sections(count);
  sections[0].header = *first;
  for (uint64_t i = 1; i < count; ++i) {
    Section& section = sections[i];
    section.header = *header_at(i);
    Elf64_Shdr& h = section.header;
    if (h.sh_name >= names.sh_size) return std::nullopt;
    const std::string_view name = name_table + h.sh_name;
    if (name.starts_with(".zdebug") || name == ".gnu_debugaltlink") return std::nullopt;
    if (h.sh_type == SHT_NOBITS) {  // no bytes: a "compressed" flag on it means nothing
      h.sh_flags &= ~uint64_t{SHF_COMPRESSED};
      continue;
    }
    if (h.sh_offset > size || h.sh_size > size - h.sh_offset) return std::nullopt;
    if (is_unread_debug_section(name)) {
      h.sh_size = 0;
      h.sh_flags &= ~uint64_t{SHF_COMPRESSED};
      continue;
    }
    section.source = h.sh_offset;
    section.source_size = h.sh_size;
    if ((h.sh_flags & SHF_COMPRESSED) == 0) continue;
    if (h.sh_size < sizeof(Elf64_Chdr)) return std::nullopt;
    const auto chdr = read_at<Elf64_Chdr>(file, h.sh_offset);
    const uint64_t stream = h.sh_size - sizeof(Elf64_Chdr);
    if (chdr.ch_type != ELFCOMPRESS_ZLIB || chdr.ch_size > stream * kMaxInflateRatio + 64)
      return std::nullopt;
    section.inflate = true;
    section.source += sizeof(Elf64_Chdr);
    section.source_size = stream;
    h.sh_size = chdr.ch_size;
    h.sh_addralign = chdr.ch_addralign;
    h.sh_flags &= ~uint64_t{SHF_COMPRESSED};
  }
  return sections;
}

}  // namespace

std::optional<std::vector<uint8_t>> inflate_elf(std::span<const uint8_t> file, unsigned threads) {
  if constexpr (std::endian::native != std::endian::little) return std::nullopt;
  if (file.size() < sizeof(Elf64_Ehdr) || std::memcmp(file.data(), ELFMAG, SELFMAG) != 0 ||
      file[EI_CLASS] != ELFCLASS64 || file[EI_DATA] != ELFDATA2LSB ||
      file[EI_VERSION] != EV_CURRENT)  // libelf's own test: no other version is ELF to it
    return std::nullopt;
  auto ehdr = read_at<Elf64_Ehdr>(file, 0);
  auto sections = plan(file, ehdr);
  if (!sections) return std::nullopt;
  // The new layout: the ELF header, the sections in their order (16-byte aligned), then
  // the section headers. The program headers are left out: nothing reads them here.
  constexpr uint64_t kAlign = 16;
  uint64_t end = sizeof(Elf64_Ehdr);
  for (size_t i = 1; i < sections->size(); ++i) {  // section 0 has no bytes
    Section& section = (*sections)[i];
    end = (end + kAlign - 1) / kAlign * kAlign;
    section.header.sh_offset = end;
    if (section.header.sh_type != SHT_NOBITS) end += section.header.sh_size;
  }
  ehdr.e_shoff = (end + kAlign - 1) / kAlign * kAlign;
  ehdr.e_phoff = 0;
  ehdr.e_phnum = 0;
  (*sections)[0].header.sh_info = 0;  // where an e_phnum of PN_XNUM keeps the count
  const uint64_t total = ehdr.e_shoff + sections->size() * sizeof(Elf64_Shdr);
  std::vector<uint8_t> image(total);
  std::memcpy(image.data(), &ehdr, sizeof ehdr);

  std::vector<const Section*> inflate;
  for (size_t i = 0; i < sections->size(); ++i) {
    const Section& section = (*sections)[i];
    std::memcpy(image.data() + ehdr.e_shoff + i * sizeof(Elf64_Shdr), &section.header,
                sizeof(Elf64_Shdr));
    if (section.inflate) inflate.push_back(&section);
    else if (section.source_size > 0 && section.header.sh_type != SHT_NOBITS)
      std::memcpy(image.data() + section.header.sh_offset, file.data() + section.source,
                  section.source_size);
  }
  // The biggest first, so that the threads finish together.
  std::sort(inflate.begin(), inflate.end(), [](const Section* a, const Section* b) {
    return a->header.sh_size > b->header.sh_size;
  });
  std::vector<char> failed(inflate.size(), 0);
  run_parallel(inflate.size(), std::max(1u, threads), [&](unsigned, size_t i) {
    const Section& section = *inflate[i];
    libdeflate_decompressor* decompressor = libdeflate_alloc_decompressor();
    size_t produced = 0;
    failed[i] = decompressor == nullptr ||
                libdeflate_zlib_decompress(decompressor, file.data() + section.source,
                                           section.source_size,
                                           image.data() + section.header.sh_offset,
                                           section.header.sh_size, &produced) != LIBDEFLATE_SUCCESS ||
                produced != section.header.sh_size;
    if (decompressor != nullptr) libdeflate_free_decompressor(decompressor);
  });
  if (std::find(failed.begin(), failed.end(), 1) != failed.end()) return std::nullopt;
  return image;
}

std::unique_ptr<ElfImage> open_inflated(const std::string& path, unsigned threads) {
  auto input = io::Input::open(path);
  if (!input || input->was_gzipped()) return nullptr;
  auto image = inflate_elf(input->bytes(), threads);
  if (!image) return nullptr;
  return ElfImage::from_memory(std::move(*image), path);
}

}  // namespace tally::symbolize
