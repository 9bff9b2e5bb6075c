#include "symbolize/inflated_elf.h"

#include <elf.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
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

namespace {

// The new image's layout: the ELF header, the sections in their order (16-byte aligned),
// then the section headers. The program headers are left out: nothing reads them here.
struct Layout {
  Elf64_Ehdr ehdr;
  std::vector<Section> sections;  // with their new offsets and sizes
  uint64_t total = 0;
};

std::optional<Layout> lay_out(std::span<const uint8_t> file) {
  if constexpr (std::endian::native != std::endian::little) return std::nullopt;
  if (file.size() < sizeof(Elf64_Ehdr) || std::memcmp(file.data(), ELFMAG, SELFMAG) != 0 ||
      file[EI_CLASS] != ELFCLASS64 || file[EI_DATA] != ELFDATA2LSB ||
      file[EI_VERSION] != EV_CURRENT)  // libelf's own test: no other version is ELF to it
    return std::nullopt;
  Layout layout;
  layout.ehdr = read_at<Elf64_Ehdr>(file, 0);
  Elf64_Ehdr& ehdr = layout.ehdr;
  auto sections = plan(file, ehdr);
  if (!sections) return std::nullopt;
  layout.sections = std::move(*sections);
  constexpr uint64_t kAlign = 16;
  uint64_t end = sizeof(Elf64_Ehdr);
  for (size_t i = 1; i < layout.sections.size(); ++i) {  // section 0 has no bytes
    Section& section = layout.sections[i];
    end = (end + kAlign - 1) / kAlign * kAlign;
    section.header.sh_offset = end;
    if (section.header.sh_type != SHT_NOBITS) end += section.header.sh_size;
  }
  ehdr.e_shoff = (end + kAlign - 1) / kAlign * kAlign;
  ehdr.e_phoff = 0;
  ehdr.e_phnum = 0;
  layout.sections[0].header.sh_info = 0;  // where an e_phnum of PN_XNUM keeps the count
  layout.total = ehdr.e_shoff + layout.sections.size() * sizeof(Elf64_Shdr);
  return layout;
}

bool has_bytes(const Section& section) {
  return section.source_size > 0 && section.header.sh_type != SHT_NOBITS;
}

}  // namespace

std::optional<std::vector<uint8_t>> inflate_elf(std::span<const uint8_t> file, unsigned threads) {
  auto layout = lay_out(file);
  if (!layout) return std::nullopt;
  const Elf64_Ehdr& ehdr = layout->ehdr;
  const std::vector<Section>* sections = &layout->sections;
  std::vector<uint8_t> image(layout->total);
  std::memcpy(image.data(), &ehdr, sizeof ehdr);

  std::vector<const Section*> inflate;
  for (size_t i = 0; i < sections->size(); ++i) {
    const Section& section = (*sections)[i];
    std::memcpy(image.data() + ehdr.e_shoff + i * sizeof(Elf64_Shdr), &section.header,
                sizeof(Elf64_Shdr));
    if (section.inflate) inflate.push_back(&section);
    else if (has_bytes(section))
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

namespace {

// pread or pwrite until all `size` bytes moved (a short transfer is retried, EINTR too).
template <typename Byte, typename Transfer>
bool transfer_all(Transfer transfer, int fd, Byte* data, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = transfer(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

bool pwrite_all(int fd, const uint8_t* data, size_t size, uint64_t offset) {
  return transfer_all(::pwrite, fd, data, size, offset);
}

bool pread_all(int fd, uint8_t* data, size_t size, uint64_t offset) {
  return transfer_all(::pread, fd, data, size, offset);
}

// Pieces of a page: written so, the copy sits in the page cache in page-sized folios, of
// which a fault on a mapping maps the kernel's fault-around (64 KB); one big write made
// 2 MB folios (ext4, Linux 6.18), each mapped whole by a fault on any byte of it.
constexpr size_t kPiece = 4096;
constexpr size_t kReadPiece = 64 * 1024;

// One section's bytes from `in` at section.source into `out` at its new offset, inflated
// (zlib) when compressed.
bool copy_section(int in, int out, const Section& section, std::vector<uint8_t>& input,
                  std::vector<uint8_t>& output) {
  const uint64_t to = section.header.sh_offset;
  if (!section.inflate) {
    for (uint64_t done = 0; done < section.source_size;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, section.source_size - done));
      if (!pread_all(in, input.data(), n, section.source + done) ||
          !pwrite_all(out, input.data(), n, to + done))
        return false;
      done += n;
    }
    return true;
  }
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return false;
  uint64_t read = 0, written = 0;
  int status = Z_OK;
  bool ok = true;
  while (ok && status != Z_STREAM_END) {
    if (zs.avail_in == 0 && read < section.source_size) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kReadPiece, section.source_size - read));
      if (!pread_all(in, input.data(), n, section.source + read)) {
        ok = false;
        break;
      }
      read += n;
      zs.next_in = input.data();
      zs.avail_in = static_cast<uInt>(n);
    }
    zs.next_out = output.data();
    zs.avail_out = static_cast<uInt>(output.size());
    status = inflate(&zs, Z_NO_FLUSH);
    const size_t produced = output.size() - zs.avail_out;
    if ((status != Z_OK && status != Z_STREAM_END) || produced > section.header.sh_size - written ||
        (status == Z_OK && produced == 0 && zs.avail_in == 0 && read == section.source_size)) {
      ok = false;
      break;
    }
    if (!pwrite_all(out, output.data(), produced, to + written)) ok = false;
    written += produced;
  }
  inflateEnd(&zs);
  return ok && written == section.header.sh_size;
}

}  // namespace

std::optional<uint64_t> write_inflated_elf(const std::string& path, int fd) {
  std::optional<Layout> layout;
  {
    auto input = io::Input::open(path);
    if (!input || input->was_gzipped()) return std::nullopt;
    layout = lay_out(input->bytes());
    // The mapping goes here: the sections are read with pread, a piece at a time.
  }
  if (!layout) return std::nullopt;
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return std::nullopt;
  std::vector<uint8_t> input(kReadPiece), output(kPiece);
  bool ok = pwrite_all(fd, reinterpret_cast<const uint8_t*>(&layout->ehdr), sizeof(Elf64_Ehdr), 0);
  for (size_t i = 0; ok && i < layout->sections.size(); ++i) {
    const Section& section = layout->sections[i];
    ok = pwrite_all(fd, reinterpret_cast<const uint8_t*>(&section.header), sizeof(Elf64_Shdr),
                    layout->ehdr.e_shoff + i * sizeof(Elf64_Shdr)) &&
         (!has_bytes(section) || copy_section(in, fd, section, input, output));
  }
  ::close(in);
  if (!ok) return std::nullopt;
  return layout->total;
}

std::unique_ptr<ElfImage> open_inflated(const std::string& path, unsigned threads) {
  auto input = io::Input::open(path);
  if (!input || input->was_gzipped()) return nullptr;
  auto image = inflate_elf(input->bytes(), threads);
  if (!image) return nullptr;
  return ElfImage::from_memory(std::move(*image), path);
}

}  // namespace tally::symbolize
