// looks_like_folded: says yes to folded text, and no to every other format's real files
// (the fixtures and the conformance files of the other readers).
#include <gtest/gtest.h>

#include <filesystem>

#include "folded_test_helpers.h"
#include "io/gzip.h"
#include "support/test_support.h"

namespace tally::folded::test {
namespace {

using tally::test::read_bytes;
using tally::test::shared;

bool looks_like(std::string_view text) { return looks_like_folded(bytes_of(text)); }

std::vector<std::string> files_in(const std::string& dir, std::string_view name_part,
                                  std::string_view without = "") {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(shared(dir))) {
    const std::string name = entry.path().filename().string();
    if (name.find(name_part) == std::string::npos) continue;
    if (!without.empty() && name.find(without) != std::string::npos) continue;
    out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint8_t> inflated(const std::string& path) {
  auto bytes = read_bytes(path);
  auto out = io::gunzip(bytes, path);
  if (!out) throw std::runtime_error(out.error().message);
  return std::move(out).value();
}

TEST(FoldedDetect, FoldedText) {
  EXPECT_TRUE(looks_like("main;a;b 5\nmain;a;c 3\n"));
  EXPECT_TRUE(looks_like("main 1"));
  EXPECT_TRUE(looks_like("# comment\n\njava;Foo bar (Baz.java:1) 42\r\n"));
  EXPECT_TRUE(looks_like("main;a 3 5\nmain;b 0 2\n"));  // differential
}

TEST(FoldedDetect, MostLinesMustBeFolded) {
  std::string ten_good;
  for (int i = 0; i < 10; ++i) ten_good += "main;f" + std::to_string(i) + " 1\n";
  EXPECT_TRUE(looks_like(ten_good + "not folded\n"));   // 10 to 1
  EXPECT_FALSE(looks_like(ten_good + "not folded\nnor this\n"));  // 10 to 2
  EXPECT_FALSE(looks_like("hello world\n"));
}

TEST(FoldedDetect, NotEmptyOrCommentsOnly) {
  EXPECT_FALSE(looks_like(""));
  EXPECT_FALSE(looks_like("\n\n"));
  EXPECT_FALSE(looks_like("# a;b 1\n"));
}

TEST(FoldedDetect, OnlyTheFirst64KiBAreLookedAt) {
  std::string text;
  while (text.size() < 70 * 1024) text += "main;work;leaf_function_with_a_long_name 12345\n";
  EXPECT_TRUE(looks_like(text + std::string(100, '\x01')));  // binary past the window
  EXPECT_FALSE(looks_like(std::string(10, '\x01') + text));
}

TEST(FoldedDetect, ALineLongerThanTheWindowIsLookedAtWhole) {
  std::string stack = "main";
  while (stack.size() < 80 * 1024) stack += ";std::vector<int, std::allocator<int>>::push_back";
  EXPECT_TRUE(looks_like(stack + " 7\n" + stack + " 3\n"));
}

TEST(FoldedDetect, NotBinaryData) {
  EXPECT_FALSE(looks_like(std::string("main;a 1\n\0\0\0\0", 13)));
}

TEST(FoldedDetect, NotGperftoolsProfiles) {
  const auto files = files_in("fixtures/gperf", ".prof");
  ASSERT_GE(files.size(), 7u);
  for (const std::string& f : files) EXPECT_FALSE(looks_like_folded(read_bytes(f))) << f;
}

TEST(FoldedDetect, NotProfileProto) {
  auto files = files_in("fixtures/gperf", ".pb.gz");
  files.push_back(shared("conformance/pprof/speedscope/simple.prof"));
  ASSERT_GE(files.size(), 8u);
  for (const std::string& f : files) {
    EXPECT_FALSE(looks_like_folded(read_bytes(f))) << f << " (compressed)";
    EXPECT_FALSE(looks_like_folded(inflated(f))) << f;
  }
}

TEST(FoldedDetect, NotPerfScriptText) {
  auto files = files_in("fixtures/perf", ".perf-script.txt");
  const auto conformance = files_in("conformance/perf-script/speedscope", ".txt");
  files.insert(files.end(), conformance.begin(), conformance.end());
  ASSERT_GE(files.size(), 11u);
  for (const std::string& f : files) EXPECT_FALSE(looks_like_folded(read_bytes(f))) << f;
}

TEST(FoldedDetect, NotPerfScriptWithoutEventNamesOrFrames) {
  // `perf script -F comm,pid,time,period` lines end in a number, but their stack part
  // ends in "time:".
  EXPECT_FALSE(looks_like("split 13067   981.768286:    1000000\n"
                          "split 13067   981.769279:    1000000\n"));
}

TEST(FoldedDetect, NotCallgrindFiles) {
  auto files = files_in("fixtures/callgrind", "callgrind.out.", ".txt");
  for (const char* dir : {"conformance/callgrind/gprof2dot", "conformance/callgrind/speedscope"}) {
    const auto more = files_in(dir, "", "SOURCE");
    files.insert(files.end(), more.begin(), more.end());
  }
  ASSERT_GE(files.size(), 15u);
  for (const std::string& f : files) EXPECT_FALSE(looks_like_folded(read_bytes(f))) << f;
}

TEST(FoldedDetect, NotCallgrindWithMostlyCostLines) {
  // Cost lines "16 3" alone would pass as folded; the header keys give callgrind away.
  std::string cost_lines;
  for (int i = 0; i < 50; ++i) cost_lines += std::to_string(i) + " 3\n";
  EXPECT_FALSE(looks_like("events: Ir\nfn=main\n" + cost_lines));
  EXPECT_FALSE(looks_like("# callgrind format\n" + cost_lines));
  EXPECT_FALSE(looks_like("fl=a.c\nfn=main\n" + cost_lines));
}

TEST(FoldedDetect, NotDcpiFiles) {
  // dcpiformat(4): "key value" header lines, several with numeric values, the "samples"
  // terminator, then binary chunks.
  const std::string header =
      "version pdb-0.07\nimage 1a2b3c4d\nepoch 9907011230\nplatform alpha\nevent cycles\n"
      "period 62976\ntstart 120000000\ntsize 4096\ncpuspeed 500\nsamples\n";
  EXPECT_FALSE(looks_like(header + std::string("\x00\x00\x00\x00\x01\x00\x00\x00", 8)));
  EXPECT_FALSE(looks_like(header));
  // Even the numeric lines alone are not taken once the version line is there.
  EXPECT_FALSE(looks_like("version pdb-0.07\nepoch 9907011230\nperiod 62976\ntstart 120000000\n"
                          "tsize 4096\ncpuspeed 500\nfoo 1\nbar 2\nbaz 3\nqux 4\nquux 5\n"));
}

}  // namespace
}  // namespace tally::folded::test
