// io::write_file_atomically and AtomicFileWriter: the target gets exactly the new content
// or is left alone, and no temporary file is ever left behind. Also make_directories /
// is_directory.
#include "io/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <set>
#include <string>

#include "support/test_support.h"

namespace tally::io {
namespace {

namespace fs = std::filesystem;

// Names of the entries of `dir`, hidden ones included.
std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

TEST(WriteFileAtomically, WritesTheContent) {
  test::TempDir dir;
  std::string data("binary\0with\0nuls\n", 17);
  auto st = write_file_atomically(dir.file("out.prof"), data);
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(test::read_text(dir.file("out.prof")), data);
}

TEST(WriteFileAtomically, WritesAnEmptyFile) {
  test::TempDir dir;
  ASSERT_TRUE(write_file_atomically(dir.file("empty"), ""));
  EXPECT_TRUE(fs::is_regular_file(dir.file("empty")));
  EXPECT_EQ(fs::file_size(dir.file("empty")), 0u);
}

TEST(WriteFileAtomically, LeavesNoTemporaryFileBehind) {
  test::TempDir dir;
  ASSERT_TRUE(write_file_atomically(dir.file("a.prof"), "first"));
  ASSERT_TRUE(write_file_atomically(dir.file("a.prof"), "second"));
  ASSERT_TRUE(write_file_atomically(dir.file("b.prof"), std::string(1 << 20, 'b')));
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"a.prof", "b.prof"}));
}

TEST(WriteFileAtomically, ReplacesAnExistingFileCompletely) {
  test::TempDir dir;
  test::write_bytes(dir.file("out"), std::string(10000, 'o'));
  test::write_bytes(dir.file("neighbour"), "untouched");
  ASSERT_TRUE(write_file_atomically(dir.file("out"), "short"));
  EXPECT_EQ(test::read_text(dir.file("out")), "short");  // no tail of the old content
  EXPECT_EQ(test::read_text(dir.file("neighbour")), "untouched");
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"out", "neighbour"}));
}

TEST(WriteFileAtomically, ReplacingGivesANewFileNotAnOverwrite) {
  // A reader holding the old file keeps seeing the old content: the rename swaps inodes.
  test::TempDir dir;
  test::write_bytes(dir.file("out"), "old");
  struct stat before {};
  ASSERT_EQ(::stat(dir.file("out").c_str(), &before), 0);
  ASSERT_TRUE(write_file_atomically(dir.file("out"), "new"));
  struct stat after {};
  ASSERT_EQ(::stat(dir.file("out").c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
}

TEST(WriteFileAtomically, OutputIsReadableByEveryone) {
  // The temporary file starts as 0600 (mkstemp); the result must be a normal 0644 file.
  test::TempDir dir;
  ASSERT_TRUE(write_file_atomically(dir.file("out"), "x"));
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("out").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(WriteFileAtomically, MissingDirectoryFailsAndLeavesNothing) {
  test::TempDir dir;
  std::string path = dir.file("no-such-dir/out.prof");
  auto st = write_file_atomically(path, "data");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, core::ErrorKind::io);
  EXPECT_NE(st.error().message.find(path), std::string::npos) << st.error().message;
  EXPECT_TRUE(entries(dir.path()).empty());
}

TEST(WriteFileAtomically, TargetThatIsADirectoryFailsAndLeavesNothing) {
  test::TempDir dir;
  fs::create_directory(dir.file("taken"));
  auto st = write_file_atomically(dir.file("taken"), "data");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, core::ErrorKind::io);
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"taken"}));
  EXPECT_TRUE(entries(dir.file("taken")).empty());
}

TEST(WriteFileAtomically, BareFileNameWritesIntoTheCurrentDirectory) {
  test::TempDir dir;
  fs::path previous = fs::current_path();
  fs::current_path(dir.path());
  auto st = write_file_atomically("here.prof", "content");
  fs::current_path(previous);
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(test::read_text(dir.file("here.prof")), "content");
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"here.prof"}));
}

TEST(WriteFileAtomically, ASymbolicLinkStaysALinkAndItsTargetIsReplaced) {
  test::TempDir dir;
  fs::create_directory(dir.file("data"));
  test::write_bytes(dir.file("data/real.prof"), "old");
  fs::create_symlink("data/real.prof", dir.file("link.prof"));
  auto st = write_file_atomically(dir.file("link.prof"), "new");
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_TRUE(fs::is_symlink(dir.file("link.prof")));
  EXPECT_EQ(test::read_text(dir.file("data/real.prof")), "new");
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"data", "link.prof"}));
  EXPECT_EQ(entries(dir.file("data")), (std::set<std::string>{"real.prof"}));
}

// `-o /dev/stdout` with stdout redirected to a file: /dev/stdout is a link (through /proc)
// to the open descriptor. The output goes after what the descriptor already wrote; the link
// is not replaced (renaming over /dev/stdout once turned it into a regular file).
TEST(WriteFileAtomically, ALinkToAnOpenDescriptorIsWrittenThroughIt) {
  test::TempDir dir;
  const std::string file = dir.file("redirected.txt");
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "before\n", 7), 7);
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  auto st = write_file_atomically(link, "after\n");
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_TRUE(fs::is_symlink(link));
  ::close(fd);
  EXPECT_EQ(test::read_text(file), "before\nafter\n");
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"redirected.txt"}));
}

TEST(AtomicFileWriter, PiecesGoToTheTemporaryFileUntilCommitted) {
  test::TempDir dir;
  test::write_bytes(dir.file("trace"), "old");
  auto writer = AtomicFileWriter::open(dir.file("trace"));
  ASSERT_TRUE(writer) << writer.error().message;
  ASSERT_TRUE(writer->write("first\n"));
  ASSERT_TRUE(writer->write("second\n"));
  const std::string temporary = writer->writing_to();
  EXPECT_EQ(fs::path(temporary).parent_path(), fs::path(dir.path()));
  EXPECT_TRUE(fs::path(temporary).filename().string().starts_with(".trace.tmp.")) << temporary;
  EXPECT_EQ(test::read_text(temporary), "first\nsecond\n") << "written at once, not held";
  EXPECT_EQ(test::read_text(dir.file("trace")), "old");
  ASSERT_TRUE(writer->commit());
  EXPECT_EQ(test::read_text(dir.file("trace")), "first\nsecond\n");
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"trace"}));
}

TEST(AtomicFileWriter, AWriterNeverCommittedLeavesTheTargetAlone) {
  test::TempDir dir;
  test::write_bytes(dir.file("trace"), "old");
  {
    auto writer = AtomicFileWriter::open(dir.file("trace"));
    ASSERT_TRUE(writer) << writer.error().message;
    ASSERT_TRUE(writer->write("half a trace"));
  }
  EXPECT_EQ(test::read_text(dir.file("trace")), "old");
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"trace"}));
}

TEST(AtomicFileWriter, AFailedWriteSaysWhereAndKeepsTheErrno) {
  auto writer = AtomicFileWriter::open("/dev/full");  // a device: written in place
  ASSERT_TRUE(writer) << writer.error().message;
  EXPECT_EQ(writer->writing_to(), "/dev/full");
  auto written = writer->write("x");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().message, "/dev/full: cannot write: No space left on device");
  EXPECT_EQ(written.error().kind, core::ErrorKind::io);
  EXPECT_EQ(writer->error_number(), ENOSPC);
}

TEST(MakeDirectories, CreatesNestedDirectoriesAndAcceptsExistingOnes) {
  test::TempDir dir;
  std::string nested = dir.file("a/b/c");
  EXPECT_FALSE(is_directory(nested));
  ASSERT_TRUE(make_directories(nested));
  EXPECT_TRUE(is_directory(nested));
  EXPECT_TRUE(make_directories(nested));  // already there: fine
}

TEST(MakeDirectories, FailsBelowARegularFile) {
  test::TempDir dir;
  test::write_bytes(dir.file("file"), "x");
  auto st = make_directories(dir.file("file/sub"));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, core::ErrorKind::io);
  EXPECT_NE(st.error().message.find(dir.file("file/sub")), std::string::npos);
  EXPECT_FALSE(is_directory(dir.file("file")));
  EXPECT_FALSE(is_directory(dir.file("missing")));
}

}  // namespace
}  // namespace tally::io
