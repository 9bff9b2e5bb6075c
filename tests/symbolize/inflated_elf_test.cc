// symbolize::inflate_elf: a debug file with compressed DWARF laid out again with its
// sections inflated. The reference is libelf's own inflation (elf_compress) of the same
// file: every section the symbolizer reads must come out byte for byte the same, the
// unread ones empty; truncated or corrupted files are refused, never read out of bounds.
#include "symbolize/inflated_elf.h"

#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "symbolize/elf_image.h"
#include "symbolize/symbolize_test_helpers.h"

namespace tally {
namespace {

using test::read_bytes;
// libc's separate debug file (libc6-dbg), whose DWARF sections are SHF_COMPRESSED.
std::string libc_debug_file() { return test::separate_debug_file("/usr/lib/x86_64-linux-gnu/libc.so.6"); }

// Section name -> its bytes (inflated by libelf when compressed) and whether it was.
struct SectionBytes {
  std::vector<uint8_t> bytes;
  bool was_compressed = false;
};
std::map<std::string, SectionBytes> sections_of(Elf* elf) {
  std::map<std::string, SectionBytes> out;
  size_t names = 0;
  EXPECT_EQ(elf_getshdrstrndx(elf, &names), 0);
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type == SHT_NOBITS) continue;
    SectionBytes& section = out[elf_strptr(elf, names, header.sh_name)];
    section.was_compressed = (header.sh_flags & SHF_COMPRESSED) != 0;
    if (section.was_compressed) {
      EXPECT_EQ(elf_compress(scn, 0, 0), 1);
    }
    Elf_Data* data = elf_rawdata(scn, nullptr);
    if (data != nullptr && data->d_buf != nullptr) {
      const auto* p = static_cast<const uint8_t*>(data->d_buf);
      section.bytes.assign(p, p + data->d_size);
    }
  }
  return out;
}

TEST(InflatedElf, SectionsAreWhatLibelfInflatesAndUnreadOnesAreEmpty) {
  const std::string debug = libc_debug_file();
  TALLY_REQUIRE_PEER(debug, "libc6-dbg (libc's separate debug file)");
  const std::vector<uint8_t> file = read_bytes(debug);
  auto image = symbolize::inflate_elf(file, 2);
  ASSERT_TRUE(image.has_value());

  elf_version(EV_CURRENT);
  std::vector<uint8_t> copy = file;  // libelf inflates in its own memory, from this
  Elf* original = elf_memory(reinterpret_cast<char*>(copy.data()), copy.size());
  Elf* inflated = elf_memory(reinterpret_cast<char*>(image->data()), image->size());
  ASSERT_NE(original, nullptr);
  ASSERT_NE(inflated, nullptr);
  auto expected = sections_of(original);
  auto actual = sections_of(inflated);
  elf_end(original);
  elf_end(inflated);

  ASSERT_EQ(actual.size(), expected.size());
  size_t compressed = 0;
  for (const auto& [name, want] : expected) {
    ASSERT_TRUE(actual.contains(name)) << name;
    const SectionBytes& got = actual[name];
    EXPECT_FALSE(got.was_compressed) << name;
    compressed += want.was_compressed;
    if (name == ".debug_loclists" || name == ".debug_loc" || name == ".debug_frame") {
      EXPECT_TRUE(got.bytes.empty()) << name;
      continue;
    }
    EXPECT_TRUE(got.bytes == want.bytes) << name << ": " << got.bytes.size() << " bytes, "
                                         << want.bytes.size() << " expected";
  }
  EXPECT_GE(compressed, 4u);  // info, abbrev, line, rnglists at least
  EXPECT_GT(actual[".debug_info"].bytes.size(), 1000000u);
}

TEST(InflatedElf, TruncatedOrCorruptedFilesAreRefused) {
  const std::string debug = libc_debug_file();
  TALLY_REQUIRE_PEER(debug, "libc6-dbg (libc's separate debug file)");
  const std::vector<uint8_t> file = read_bytes(debug);
  // Cut anywhere, the file has lost its section headers (at the end) or part of a section.
  for (size_t size : {size_t{0}, size_t{16}, size_t{64}, file.size() / 3, file.size() / 2,
                      file.size() - 64, file.size() - 1}) {
    std::vector<uint8_t> cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_FALSE(symbolize::inflate_elf(cut, 2).has_value()) << "cut at " << size;
  }
  // A flipped byte inside a compressed stream: libdeflate reports it, nothing is made.
  elf_version(EV_CURRENT);
  std::vector<uint8_t> copy = file;
  Elf* elf = elf_memory(reinterpret_cast<char*>(copy.data()), copy.size());
  ASSERT_NE(elf, nullptr);
  size_t names = 0;
  ASSERT_EQ(elf_getshdrstrndx(elf, &names), 0);
  uint64_t info_offset = 0, info_size = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) != nullptr &&
        std::string(elf_strptr(elf, names, header.sh_name)) == ".debug_info") {
      info_offset = header.sh_offset;
      info_size = header.sh_size;
    }
  }
  elf_end(elf);
  ASSERT_GT(info_size, 4096u);
  for (uint64_t at : {info_offset + 8, info_offset + 40, info_offset + info_size / 2,
                      info_offset + info_size - 2}) {
    std::vector<uint8_t> flipped = file;
    flipped[at] ^= 0x5a;
    EXPECT_FALSE(symbolize::inflate_elf(flipped, 1).has_value()) << "flipped byte " << at;
  }  // An identification version other than EV_CURRENT (a fuzzer's find): libelf reads no
  // such file as ELF, so it is not laid out again as one.
  std::vector<uint8_t> other_version = file;
  other_version[EI_VERSION] = 8;
  EXPECT_FALSE(symbolize::inflate_elf(other_version, 1).has_value());
  EXPECT_TRUE(symbolize::inflate_elf(file, 1).has_value());
}

// The bytes write_inflated_elf streams into a new file (a temporary one; "" when it failed).
std::vector<uint8_t> streamed(const std::string& path, std::optional<uint64_t>* size = nullptr) {
  test::TempDir dir;
  const std::string out = dir.path() + "/streamed";
  const int fd = ::open(out.c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  const std::optional<uint64_t> written = symbolize::write_inflated_elf(path, fd);
  ::close(fd);
  if (size != nullptr) *size = written;
  return written ? read_bytes(out) : std::vector<uint8_t>();
}

// The daemon's copies are streamed into their file a piece at a time, with zlib: byte for
// byte the image inflate_elf makes in memory (whose sections the test above checks against
// libelf), for libc's and ld.so's debug files; a cut or corrupted file makes none.
TEST(InflatedElf, StreamedIntoAFileIsTheImageInMemory) {
  for (const char* binary : {"/usr/lib/x86_64-linux-gnu/libc.so.6",
                             "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"}) {
    SCOPED_TRACE(binary);
    const std::string debug = test::separate_debug_file(binary);
    TALLY_REQUIRE_PEER(debug, "libc6-dbg (libc's separate debug files)");
    auto image = symbolize::inflate_elf(read_bytes(debug), 2);
    ASSERT_TRUE(image.has_value());
    std::optional<uint64_t> size;
    const std::vector<uint8_t> bytes = streamed(debug, &size);
    ASSERT_TRUE(size.has_value());
    EXPECT_EQ(*size, image->size());
    EXPECT_EQ(bytes.size(), image->size());
    EXPECT_TRUE(bytes == *image);
  }
  const std::string debug = libc_debug_file();
  const std::vector<uint8_t> file = read_bytes(debug);
  test::TempDir dir;
  auto written = [&](const std::vector<uint8_t>& bytes) {
    const std::string path = dir.path() + "/some.debug";
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    std::optional<uint64_t> size;
    streamed(path, &size);
    return size.has_value();
  };
  EXPECT_TRUE(written(file));
  for (size_t size : {size_t{64}, file.size() / 2, file.size() - 1}) {
    std::vector<uint8_t> cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_FALSE(written(cut)) << "cut at " << size;
  }
  // A byte flipped in the middle of each compressed stream: zlib refuses it (its checksum).
  auto image = symbolize::ElfImage::open(debug);
  ASSERT_NE(image, nullptr);
  size_t names = 0;
  ASSERT_EQ(elf_getshdrstrndx(image->elf(), &names), 0);
  size_t flipped_streams = 0;
  for (Elf_Scn* scn = elf_nextscn(image->elf(), nullptr); scn != nullptr;
       scn = elf_nextscn(image->elf(), scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || (header.sh_flags & SHF_COMPRESSED) == 0) continue;
    const char* name = elf_strptr(image->elf(), names, header.sh_name);
    if (std::string(name) == ".debug_loclists") continue;  // not read: left empty
    std::vector<uint8_t> flipped = file;
    flipped[header.sh_offset + header.sh_size / 2] ^= 0x5a;
    EXPECT_FALSE(written(flipped)) << name;
    ++flipped_streams;
  }
  EXPECT_GE(flipped_streams, 4u);
}

// A section without bytes (SHT_NOBITS: in a debug file, the code itself) that claims to
// be compressed (a fuzzer's find) has nothing to inflate: the new image says so.
TEST(InflatedElf, ACompressedFlagOnASectionWithoutBytesIsDropped) {
  const std::string debug = libc_debug_file();
  TALLY_REQUIRE_PEER(debug, "libc6-dbg (libc's separate debug file)");
  std::vector<uint8_t> file = read_bytes(debug);
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, file.data(), sizeof ehdr);
  size_t marked = 0;
  for (size_t i = 1; i < ehdr.e_shnum; ++i) {
    Elf64_Shdr header;
    const size_t at = ehdr.e_shoff + i * sizeof header;
    std::memcpy(&header, file.data() + at, sizeof header);
    if (header.sh_type != SHT_NOBITS) continue;
    header.sh_flags |= SHF_COMPRESSED;
    std::memcpy(file.data() + at, &header, sizeof header);
    ++marked;
  }
  ASSERT_GT(marked, 0u);
  auto image = symbolize::inflate_elf(file, 2);
  ASSERT_TRUE(image.has_value());
  elf_version(EV_CURRENT);
  Elf* elf = elf_memory(reinterpret_cast<char*>(image->data()), image->size());
  ASSERT_NE(elf, nullptr);
  size_t nobits = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    ASSERT_NE(gelf_getshdr(scn, &header), nullptr);
    EXPECT_EQ(header.sh_flags & SHF_COMPRESSED, 0u);
    nobits += header.sh_type == SHT_NOBITS;
  }
  elf_end(elf);
  EXPECT_EQ(nobits, marked);
}

TEST(InflatedElf, OnlySixtyFourBitLittleEndianElfIsLaidOutAgain) {
  std::vector<uint8_t> not_elf(4096, 0x41);
  EXPECT_FALSE(symbolize::inflate_elf(not_elf, 1).has_value());
  std::vector<uint8_t> elf32(4096, 0);
  elf32[0] = 0x7f, elf32[1] = 'E', elf32[2] = 'L', elf32[3] = 'F';
  elf32[EI_CLASS] = ELFCLASS32;
  elf32[EI_DATA] = ELFDATA2LSB;
  EXPECT_FALSE(symbolize::inflate_elf(elf32, 1).has_value());
}

}  // namespace
}  // namespace tally
