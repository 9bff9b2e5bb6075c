// One ELF file opened read-only with libelf: its build id, .gnu_debuglink, whether it
// carries DWARF, and its loadable segments (for the load bias).
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <bit>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tally::symbolize {

struct LoadSegment {
  uint64_t offset = 0;  // p_offset
  uint64_t vaddr = 0;   // p_vaddr
  uint64_t filesz = 0;
  uint64_t align = 0;
  bool executable = false;
  uint64_t memsz = 0;  // p_memsz (the segment's extent in memory, .bss included)
  bool writable = false;
};

class ElfImage {
 public:
  enum class Access {
    map,   // mmap the file: only the pages read come in (the default)
    read,  // read sections into memory when asked for: for a file whose big sections are
           // compressed, which are inflated whole anyway, so that its compressed pages do
           // not stay mapped (and counted in the resident set) next to the inflated copies
  };
  // nullptr when the file cannot be opened or is not ELF.
  static std::unique_ptr<ElfImage> open(const std::string& path, Access access = Access::map);
  // An ELF image held in memory (the vdso copied out of a process); `name` as the kernel
  // names the mapping. nullptr when the bytes are not ELF.
  static std::unique_ptr<ElfImage> from_memory(std::vector<uint8_t> bytes, std::string name);
  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  Elf* elf() const { return elf_; }
  const std::string& path() const { return path_; }
  // Lower-case hex of NT_GNU_BUILD_ID, or "" when there is none.
  std::string build_id() const;
  // The file name in .gnu_debuglink, or "".
  std::string debuglink() const;
  bool has_dwarf() const;
  bool has_symtab() const;
  // Whether .debug_info is there and SHF_COMPRESSED.
  bool has_compressed_dwarf() const;
  // Whether a section of that name exists (and, with `with_bits`, is not NOBITS).
  bool has_section(const char* name, bool with_bits) const;
  // The header of the first section of that name with bits, or nullopt.
  std::optional<GElf_Shdr> section_header(const char* name) const;
  // The bytes of the first section of that name with bits (inflated when compressed), and
  // its link-time address; nullopt when there is none or it cannot be read. With `file`,
  // the same file's bytes mapped by the caller, an uncompressed section is a view of those
  // (whose pages the caller can give back), not of libelf's copy.
  struct SectionData {
    std::span<const uint8_t> bytes;
    uint64_t address = 0;
  };
  std::optional<SectionData> section_data(const char* name, std::span<const uint8_t> file = {}) const;
  // 4 (ELFCLASS32) or 8, and the file's byte order.
  unsigned address_size() const;
  std::endian byte_order() const;
  bool is_exec() const;  // ET_EXEC: linked at fixed addresses
  std::vector<LoadSegment> load_segments() const;

 private:
  std::optional<GElf_Shdr> find_section(const char* name, bool with_bits) const;
  ElfImage(int fd, Elf* elf, std::string path) : fd_(fd), elf_(elf), path_(std::move(path)) {}
  int fd_;
  Elf* elf_;
  std::string path_;
  std::vector<uint8_t> bytes_;  // the image itself when it was not read from a file
};

// The link-time virtual address of runtime address `address` in a mapping of `start`
// at file `offset`, from the ELF's loadable segments; nullopt when no segment holds the
// offset. A mapping with start 0 (unknown) takes addresses as link-time addresses.
std::optional<uint64_t> link_time_address(const std::vector<LoadSegment>& segments, bool is_exec,
                                          uint64_t start, uint64_t offset, uint64_t address);

}  // namespace tally::symbolize
