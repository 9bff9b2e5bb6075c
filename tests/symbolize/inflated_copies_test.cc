// symbolize::InflatedCopies: a compressed debug file inflated once into an unlinked file,
// which the symbolizer then reads like an uncompressed one (the daemon's pushes). The
// copy's sections are checked against libelf's own inflation of the original, a changed
// file gets a new copy, and lookups through the copy give the frames the in-memory
// inflation gives.
#include "symbolize/inflated_copies.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>
#include <gtest/gtest.h>
#include <libelf.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "symbolize/elf_image.h"
#include "symbolize/find_binary.h"
#include "symbolize/symbol_map.h"
#include "symbolize/symbolize_test_helpers.h"

namespace tally {
namespace {

const char* const kLibc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const char* const kLoader = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2";

using test::read_bytes;
// The separate debug file (libc6-dbg) of `binary`, whose DWARF sections are SHF_COMPRESSED.
std::string debug_file_of(const std::string& binary) { return test::separate_debug_file(binary); }

// The bytes of section `name`, inflated by libelf when compressed.
std::vector<uint8_t> section_bytes(std::vector<uint8_t> file, const std::string& name) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_memory(reinterpret_cast<char*>(file.data()), file.size());
  EXPECT_NE(elf, nullptr);
  std::vector<uint8_t> out;
  size_t names = 0;
  if (elf == nullptr || elf_getshdrstrndx(elf, &names) != 0) return out;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || name != elf_strptr(elf, names, header.sh_name))
      continue;
    if ((header.sh_flags & SHF_COMPRESSED) != 0) {
      EXPECT_EQ(elf_compress(scn, 0, 0), 1);
    }
    Elf_Data* data = elf_rawdata(scn, nullptr);
    if (data != nullptr && data->d_buf != nullptr) {
      const auto* p = static_cast<const uint8_t*>(data->d_buf);
      out.assign(p, p + data->d_size);
    }
  }
  elf_end(elf);
  return out;
}

TEST(InflatedCopies, CopyHoldsWhatLibelfInflatesAndIsMadeOnce) {
  const std::string debug = debug_file_of(kLibc);
  TALLY_REQUIRE_PEER(debug, "libc6-dbg (libc's separate debug file)");
  test::TempDir dir;
  symbolize::InflatedCopies copies(dir.path());
  const std::string path = copies.path_of(debug);
  ASSERT_FALSE(path.empty());
  const std::vector<uint8_t> original = read_bytes(debug), copy = read_bytes(path);
  for (const char* name : {".debug_info", ".debug_line", ".debug_abbrev", ".debug_str"}) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> expected = section_bytes(original, name);
    ASSERT_FALSE(expected.empty());
    EXPECT_TRUE(section_bytes(copy, name) == expected);
  }
  auto image = symbolize::ElfImage::open(path);
  ASSERT_NE(image, nullptr);
  EXPECT_FALSE(image->has_compressed_dwarf());
  // Unlinked: nothing left in the directory.
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  EXPECT_EQ(copies.path_of(debug), path);
  EXPECT_EQ(copies.copies(), 1u);
  EXPECT_EQ(copies.bytes(), copy.size());
}

TEST(InflatedCopies, AChangedFileGetsANewCopy) {
  const std::string libc = debug_file_of(kLibc), loader = debug_file_of(kLoader);
  TALLY_REQUIRE_PEER(libc, "libc6-dbg (libc's separate debug file)");
  TALLY_REQUIRE_PEER(loader, "libc6-dbg (ld.so's separate debug file)");
  test::TempDir dir;
  const std::string file = dir.path() + "/some.debug";
  std::filesystem::copy_file(libc, file);
  symbolize::InflatedCopies copies(dir.path());
  auto build_id_of = [](const std::string& path) {
    auto image = symbolize::ElfImage::open(path);
    return image ? image->build_id() : "";
  };
  const std::string libc_id = build_id_of(libc), loader_id = build_id_of(loader);
  ASSERT_NE(libc_id, loader_id);
  EXPECT_EQ(build_id_of(copies.path_of(file)), libc_id);
  // Replaced (a package upgrade writes a new file over the old path).
  std::filesystem::remove(file);
  std::filesystem::copy_file(loader, file);
  EXPECT_EQ(build_id_of(copies.path_of(file)), loader_id);
  EXPECT_EQ(copies.copies(), 1u);
  EXPECT_EQ(copies.bytes(), read_bytes(copies.path_of(file)).size());
}

TEST(InflatedCopies, NoCopyWithoutAWritableDirectoryOrOverTheBudget) {
  const std::string debug = debug_file_of(kLibc);
  TALLY_REQUIRE_PEER(debug, "libc6-dbg (libc's separate debug file)");
  test::TempDir dir;
  symbolize::InflatedCopies missing_dir(dir.path() + "/not-there");
  EXPECT_EQ(missing_dir.path_of(debug), "");
  symbolize::InflatedCopies small(dir.path(), 1 << 20);
  EXPECT_EQ(small.path_of(debug), "");
  EXPECT_EQ(small.bytes(), 0u);
  symbolize::InflatedCopies copies(dir.path());
  EXPECT_EQ(copies.path_of(dir.path() + "/no-such.debug"), "");
}

// The kB of the mapping starting at `start` that are in this process's resident set.
long resident_kb(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  while (std::getline(smaps, line)) {
    uint64_t low = 0;
    char dash = 0;
    if (std::istringstream(line) >> std::hex >> low >> dash && dash == '-') {
      in_mapping = low == reinterpret_cast<uint64_t>(start);
    } else if (in_mapping && line.starts_with("Rss:")) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

// A byte read from a mapping of the copy makes a little of it resident, not megabytes: the
// copy is written a page at a time (one big write put it in the page cache as 2 MB folios,
// which a fault maps whole on Linux 6.18: all of libc's 8.7 MB copy was resident in the
// daemon after libdw read a few bytes of it here and there).
TEST(InflatedCopies, AByteReadFromTheCopyMapsLittleOfIt) {
  const std::string debug = debug_file_of(kLibc);
  TALLY_REQUIRE_PEER(debug, "libc6-dbg (libc's separate debug file)");
  test::TempDir dir;
  symbolize::InflatedCopies copies(dir.path());
  const std::string path = copies.path_of(debug);
  ASSERT_FALSE(path.empty());
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const size_t size = read_bytes(path).size();
  ASSERT_GT(size, 4u << 20);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  const volatile uint8_t* bytes = static_cast<const uint8_t*>(map);
  uint8_t sum = 0;
  for (size_t at : {size / 2, size / 4 + 12345, size - 100}) sum += bytes[at];
  const long kb = resident_kb(map);
  ::munmap(map, size);
  EXPECT_GE(kb, 4) << int(sum);
  EXPECT_LE(kb, 3 * 256);  // the kernel's fault-around (64 KB here) per byte read, at most 256 KB
}

// Made without the image nor the compressed file whole in memory (write_inflated_elf): the
// copy of libc's debug file raised the daemon's peak by 8.7 MB of image and 4 MB of
// compressed file mapped, in its first interval.
TEST(InflatedCopies, MadeWithoutTheImageInMemory) {
  const std::string debug = debug_file_of(kLibc);
  TALLY_REQUIRE_PEER(debug, "libc6-dbg (libc's separate debug file)");
  test::TempDir dir;
  symbolize::InflatedCopies copies(dir.path());
  auto peak_kb = [](bool reset) {
    if (reset) std::ofstream("/proc/self/clear_refs") << "5";
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
      if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
    return -1L;
  };
  const long before = peak_kb(true);
  ASSERT_FALSE(copies.path_of(debug).empty());
  const long peak = peak_kb(false);
  ASSERT_GT(before, 0);
  EXPECT_GT(copies.bytes(), 8u << 20);
#if !defined(__SANITIZE_ADDRESS__)  // (ASan's shadow and quarantine add their own megabytes)
  EXPECT_LT(peak - before, 3 * 1024) << "kB over " << before;
#else
  (void)peak;
#endif
}

// The frames of addresses across libc's code: through the copy the same as through the
// in-memory inflation (whose names and lines symbolize_addr2line_test checks against
// addr2line).
TEST(InflatedCopies, LookupsThroughTheCopyGiveTheSameFrames) {
  TALLY_REQUIRE_PEER(debug_file_of(kLibc), "libc6-dbg (libc's separate debug file)");
  const symbolize::FoundBinary found = symbolize::find_binary(kLibc, "", {});
  ASSERT_FALSE(found.debug.empty());
  test::TempDir dir;
  symbolize::InflatedCopies copies(dir.path());
  auto in_memory = symbolize::SymbolMap::open(found, 1);
  auto through_copy = symbolize::SymbolMap::open(found, 1, &copies);
  ASSERT_TRUE(in_memory && through_copy);
  EXPECT_EQ(copies.copies(), 1u);
  std::vector<uint64_t> addresses;
  for (uint64_t a = 0x28000; a < 0x190000; a += 0x1234) addresses.push_back(a);
  const size_t with_lines = test::expect_same_frames(**in_memory, **through_copy, addresses);
  EXPECT_GT(with_lines, addresses.size() / 2);  // the DWARF was read, not only symbols
  // The next map through the copy reads the compile units' table kept with it.
  ASSERT_NE(copies.units_of(found.debug), nullptr);
  EXPECT_EQ(copies.units_of(found.debug)->offsets.size(), (*in_memory)->index().unit_count());
  auto again = symbolize::SymbolMap::open(found, 1, &copies);
  ASSERT_TRUE(again);
  EXPECT_EQ(test::expect_same_frames(**in_memory, **again, addresses), with_lines);
}

}  // namespace
}  // namespace tally
