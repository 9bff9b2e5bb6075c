// FileBuildIds: build ids read from the files processes map, checked against readelf's
// reading of the same files; a file replaced at its path is not taken for the mapped one;
// a mapped file deleted since is still read through /proc/PID/map_files (root only).
#include "collect/file_build_ids.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "support/test_support.h"

namespace tally::collect {
namespace {

// "Build ID: <hex>" of `readelf -n path`, "" when it prints none.
std::string readelf_build_id(const std::string& path) {
  const std::string readelf = test::find_program("readelf");
  if (readelf.empty()) return "";
  test::RunResult r = test::run({readelf, "-n", path});
  std::smatch match;
  if (!std::regex_search(r.out, match, std::regex("Build ID: ([0-9a-f]+)"))) return "";
  return match[1];
}

// An MMAP2 record as the kernel would write it for `size` bytes of `fd` mapped at `start`.
MmapRecord record_of(int fd, const std::string& path, uint64_t start, uint64_t size) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  MmapRecord m;
  m.pid = m.tid = static_cast<uint32_t>(::getpid());
  m.start = start;
  m.length = size;
  m.dev_major = major(st.st_dev);
  m.dev_minor = minor(st.st_dev);
  m.inode = st.st_ino;
  m.prot = PROT_READ | PROT_EXEC;
  m.filename = path;
  return m;
}

class MappedCopy {
 public:
  // A copy of `source` in `dir`, mapped (its first page is enough for the record).
  MappedCopy(const std::string& source, const test::TempDir& dir) : path_(dir.file("copy.so")) {
    std::filesystem::copy_file(source, path_);
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    size_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    address_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
  }
  ~MappedCopy() {
    if (address_ != MAP_FAILED) ::munmap(address_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0 && address_ != MAP_FAILED; }
  MmapRecord record() const {
    return record_of(fd_, path_, reinterpret_cast<uint64_t>(address_), size_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  void* address_ = MAP_FAILED;
  size_t size_ = 0;
};

// libc, as this test maps it: a shared object with a build id on every Debian system.
std::string mapped_libc() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    size_t slash = line.find('/');
    if (slash != std::string::npos && line.find("/libc.so") != std::string::npos)
      return line.substr(slash);
  }
  return "";
}

TEST(FileBuildIds, AMappedFileGivesTheBuildIdReadelfReads) {
  const std::string libc = mapped_libc();
  ASSERT_FALSE(libc.empty());
  const std::string expected = readelf_build_id(libc);
  TALLY_REQUIRE_PEER(expected, "readelf (binutils)");
  test::TempDir dir;
  MappedCopy copy(libc, dir);
  ASSERT_TRUE(copy.ok());
  FileBuildIds ids;
  EXPECT_EQ(ids.of(copy.record()), expected);
  EXPECT_EQ(ids.of(copy.record()), expected);
  EXPECT_EQ(ids.stats().files_read, 1u) << "one read per file";
}

TEST(FileBuildIds, AnotherFileAtThePathIsNotTheMappedOne) {
  const std::string libc = mapped_libc();
  ASSERT_FALSE(libc.empty());
  test::TempDir dir;
  MappedCopy copy(libc, dir);
  ASSERT_TRUE(copy.ok());
  MmapRecord m = copy.record();
  m.pid = 0;       // no /proc/PID way in: only the path is tried
  m.inode += 1;    // what was mapped was another inode than the path's now
  FileBuildIds ids;
  EXPECT_EQ(ids.of(m), "");
  EXPECT_EQ(ids.stats().unreachable, 1u);
}

TEST(FileBuildIds, PseudoAndAnonymousMappingsHaveNone) {
  FileBuildIds ids;
  MmapRecord m;
  m.pid = static_cast<uint32_t>(::getpid());
  m.inode = 1;
  for (const char* name : {"", "[vdso]", "//anon"}) {
    m.filename = name;
    EXPECT_EQ(ids.of(m), "") << name;
  }
  EXPECT_EQ(ids.stats().files_read, 0u);
}

TEST(FileBuildIds, ADeletedFileIsReadThroughMapFiles) {
  // /proc/PID/map_files opens only with CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE).
  if (::geteuid() != 0) TALLY_SKIP_OR_FAIL_IN_CI("reading /proc/self/map_files needs root");
  const std::string libc = mapped_libc();
  ASSERT_FALSE(libc.empty());
  const std::string expected = readelf_build_id(libc);
  TALLY_REQUIRE_PEER(expected, "readelf (binutils)");
  test::TempDir dir;
  MappedCopy copy(libc, dir);
  ASSERT_TRUE(copy.ok());
  const MmapRecord m = copy.record();
  ASSERT_EQ(::unlink(copy.path().c_str()), 0);
  FileBuildIds ids;
  EXPECT_EQ(ids.of(m), expected);
}

}  // namespace
}  // namespace tally::collect
