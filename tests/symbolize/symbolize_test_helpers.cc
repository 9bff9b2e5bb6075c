#include "symbolize/symbolize_test_helpers.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

#include "symbolize/elf_image.h"

namespace tally::test {

namespace {

struct ElfFile {
  explicit ElfFile(const std::string& path) {
    elf_version(EV_CURRENT);
    fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) throw std::runtime_error("cannot open " + path);
    elf = elf_begin(fd, ELF_C_READ, nullptr);
    if (elf == nullptr) throw std::runtime_error("not ELF: " + path);
  }
  ~ElfFile() {
    elf_end(elf);
    ::close(fd);
  }
  int fd = -1;
  Elf* elf = nullptr;
};

}  // namespace

std::vector<ElfFunction> elf_functions(const std::string& path) {
  ElfFile file(path);
  std::vector<ElfFunction> functions;
  for (Elf_Scn* scn = elf_nextscn(file.elf, nullptr); scn; scn = elf_nextscn(file.elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; i < header.sh_size / header.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(data, static_cast<int>(i), &sym);
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF || sym.st_size == 0)
        continue;
      functions.push_back({elf_strptr(file.elf, header.sh_link, sym.st_name), sym.st_value,
                           sym.st_size});
    }
  }
  return functions;
}

core::Profile profile_mapping(const std::string& path, uint64_t base,
                              const std::vector<uint64_t>& addresses, const std::string& build_id) {
  ElfFile file(path);
  size_t count = 0;
  elf_getphdrnum(file.elf, &count);
  core::Profile profile;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr header;
    gelf_getphdr(file.elf, static_cast<int>(i), &header);
    if (header.p_type != PT_LOAD || (header.p_flags & PF_X) == 0) continue;
    // The kernel maps page-aligned: the mapping starts at the page holding the segment.
    uint64_t page_offset = header.p_offset & ~uint64_t{0xfff};
    uint64_t page_vaddr = header.p_vaddr & ~uint64_t{0xfff};
    core::Mapping mapping;
    mapping.start = base + page_vaddr;
    mapping.limit = base + ((header.p_vaddr + header.p_memsz + 0xfff) & ~uint64_t{0xfff});
    mapping.offset = page_offset;
    mapping.file = profile.intern(path);
    mapping.build_id = profile.intern(build_id);
    core::MappingId id = profile.add_mapping(mapping);
    for (uint64_t address : addresses) {
      core::Location location;
      location.mapping = id;
      location.address = base + address;
      profile.add_location(location);
    }
    return profile;
  }
  throw std::runtime_error("no executable segment in " + path);
}

std::vector<std::string> location_frames(const core::Profile& profile, core::LocationId id) {
  std::vector<std::string> frames;
  for (const auto& line : profile.location(id).lines) {
    const auto& function = profile.function(line.function);
    frames.push_back(std::string(profile.str(function.name)) + "|" +
                     std::string(profile.str(function.filename)) + "|" +
                     std::to_string(line.line));
  }
  return frames;
}

std::string separate_debug_file(const std::string& binary) {
  auto image = symbolize::ElfImage::open(binary);
  const std::string id = image ? image->build_id() : "";
  if (id.size() <= 2) return "";
  const std::string path = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  return std::ifstream(path).good() ? path : "";
}

size_t expect_same_frames(symbolize::SymbolMap& expected, symbolize::SymbolMap& actual,
                          const std::vector<uint64_t>& addresses) {
  std::vector<symbolize::Frame> a_frames, b_frames;
  std::vector<uint32_t> a_ends, b_ends;
  expected.lookup(addresses, a_frames, a_ends);
  actual.lookup(addresses, b_frames, b_ends);
  EXPECT_EQ(a_ends, b_ends);
  if (a_frames.size() != b_frames.size()) return 0;
  size_t with_lines = 0;
  for (size_t i = 0; i < a_frames.size(); ++i) {
    EXPECT_EQ(a_frames[i].function->name, b_frames[i].function->name);
    EXPECT_STREQ(a_frames[i].file, b_frames[i].file);
    EXPECT_EQ(a_frames[i].line, b_frames[i].line);
    with_lines += b_frames[i].line != 0;
  }
  return with_lines;
}

}  // namespace tally::test
