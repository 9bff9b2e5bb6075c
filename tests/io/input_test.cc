// io::Input: regular files (memory-mapped), standard input, gzip inflated on the way in,
// and errors that say which path failed and why.
#include "io/input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "io/gzip.h"
#include "support/test_support.h"

namespace tally::io {
namespace {

std::string text_of(const Input& in) { return std::string(in.text()); }

std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

TEST(InputOpen, ReadsARegularFile) {
  test::TempDir dir;
  std::string path = dir.file("cpu.prof");
  std::string data = random_bytes(70000, 1);
  data[0] = 'P';  // not the gzip magic
  test::write_bytes(path, data);
  auto in = Input::open(path);
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_EQ(in->name(), path);
  EXPECT_FALSE(in->was_gzipped());
  ASSERT_EQ(in->bytes().size(), data.size());
  EXPECT_EQ(text_of(*in), data);
}

TEST(InputOpen, EmptyFileHasNoBytes) {
  test::TempDir dir;
  test::write_bytes(dir.file("empty"), "");
  auto in = Input::open(dir.file("empty"));
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_TRUE(in->bytes().empty());
  EXPECT_EQ(in->text(), "");
}

TEST(InputOpen, MissingFileIsAnIoErrorNamingThePath) {
  test::TempDir dir;
  std::string path = dir.file("no-such.prof");
  auto in = Input::open(path);
  ASSERT_FALSE(in);
  EXPECT_EQ(in.error().kind, core::ErrorKind::io);
  EXPECT_NE(in.error().message.find(path), std::string::npos) << in.error().message;
  EXPECT_NE(in.error().message.find("No such file"), std::string::npos) << in.error().message;
}

TEST(InputOpen, DirectoryIsRefused) {
  test::TempDir dir;
  auto in = Input::open(dir.path());
  ASSERT_FALSE(in);
  EXPECT_NE(in.error().message.find(dir.path()), std::string::npos) << in.error().message;
  EXPECT_NE(in.error().message.find("directory"), std::string::npos) << in.error().message;
}

TEST(InputOpen, GzipFileIsInflated) {
  test::TempDir dir;
  std::string data = "--- symbol\nbinary=/bin/true\n" + std::string(200000, 'x');
  test::write_bytes(dir.file("p.gz"), gzip(data));
  auto in = Input::open(dir.file("p.gz"));
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_TRUE(in->was_gzipped());
  EXPECT_EQ(in->name(), dir.file("p.gz"));
  EXPECT_EQ(text_of(*in), data);
}

TEST(InputOpen, CorruptGzipFileFailsNamingThePath) {
  test::TempDir dir;
  std::string gz = gzip(std::string(5000, 'y'));
  test::write_bytes(dir.file("cut.gz"), gz.substr(0, gz.size() / 2));
  auto in = Input::open(dir.file("cut.gz"));
  ASSERT_FALSE(in);
  EXPECT_EQ(in.error().message.rfind(dir.file("cut.gz") + ": ", 0), 0u) << in.error().message;
  EXPECT_NE(in.error().message.find("truncated"), std::string::npos) << in.error().message;
}

TEST(InputOpen, NonRegularFilesAreReadFully) {
  auto in = Input::open("/dev/null");
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_TRUE(in->bytes().empty());
}

// Points standard input at a pipe fed with `data` (from a thread, so any size works)
// for the lifetime of the object.
class StdinFrom {
 public:
  explicit StdinFrom(std::string data) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    saved_ = ::dup(STDIN_FILENO);
    ::dup2(fds[0], STDIN_FILENO);
    ::close(fds[0]);
    writer_ = std::thread([fd = fds[1], d = std::move(data)] {
      size_t done = 0;
      while (done < d.size()) {
        ssize_t n = ::write(fd, d.data() + done, d.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      ::close(fd);
    });
  }
  ~StdinFrom() {
    writer_.join();
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
  }
  StdinFrom(const StdinFrom&) = delete;
  StdinFrom& operator=(const StdinFrom&) = delete;

 private:
  int saved_ = -1;
  std::thread writer_;
};

TEST(InputOpen, DashReadsStandardInput) {
  std::string data = random_bytes(300000, 2);  // more than a pipe buffer
  data[0] = 'D';
  StdinFrom stdin_from(data);
  auto in = Input::open("-");
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_EQ(in->name(), "<stdin>");
  EXPECT_FALSE(in->was_gzipped());
  EXPECT_EQ(text_of(*in), data);
}

TEST(InputOpen, GzippedStandardInputIsInflated) {
  std::string data(500000, 'g');
  StdinFrom stdin_from(gzip(data));
  auto in = Input::open("-");
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_TRUE(in->was_gzipped());
  EXPECT_EQ(text_of(*in), data);
}

TEST(InputFromBytes, HoldsTheGivenBytesUnchanged) {
  std::string gz = gzip("abc");
  Input in = Input::from_bytes("memory", std::vector<uint8_t>(gz.begin(), gz.end()));
  EXPECT_EQ(in.name(), "memory");
  EXPECT_EQ(text_of(in), gz);  // from_bytes does not inflate
  EXPECT_FALSE(in.was_gzipped());
  Input empty = Input::from_bytes("none", {});
  EXPECT_TRUE(empty.bytes().empty());
}

TEST(InputMove, MovedInputsKeepTheirBytes) {
  test::TempDir dir;
  std::string data = "mapped file content";
  test::write_bytes(dir.file("f"), data);
  auto opened = Input::open(dir.file("f"));
  ASSERT_TRUE(opened) << opened.error().message;
  Input mapped = std::move(*opened);
  EXPECT_EQ(text_of(mapped), data);

  Input owned = Input::from_bytes("owned", {'o', 'w', 'n'});
  Input target = Input::from_bytes("target", {'t'});
  target = std::move(owned);
  EXPECT_EQ(target.name(), "owned");
  EXPECT_EQ(text_of(target), "own");
  target = std::move(mapped);  // replacing an owned input with a mapped one
  EXPECT_EQ(text_of(target), data);
  EXPECT_EQ(target.name(), dir.file("f"));
}

TEST(InputRelease, BytesStayReadableAfterRelease) {
  // Released pages of a file mapping are read back from the file when touched again.
  test::TempDir dir;
  std::string data = random_bytes(size_t(40) << 20, 3);
  data[0] = 'R';
  test::write_bytes(dir.file("big"), data);
  auto in = Input::open(dir.file("big"));
  ASSERT_TRUE(in) << in.error().message;
  in->release_before(size_t(36) << 20);
  in->release_before(data.size());
  EXPECT_TRUE(text_of(*in) == data);
}

}  // namespace
}  // namespace tally::io
