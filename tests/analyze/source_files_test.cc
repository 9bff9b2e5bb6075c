// analyze/source_files: pprof's trimPath and source search (internal/report/source.go:
// openSourceFile, trimPath), on the cases its comments describe and on a directory tree.
#include <gtest/gtest.h>

#include <filesystem>

#include "analyze/source_files.h"
#include "support/test_support.h"

namespace tally::analyze {
namespace {

TEST(TrimSourcePath, GuessFromTheSearchDirectorysName) {
  // pprof's own example: "/some/remote/path/my-project/foo/bar.c" with the search path
  // "/my/local/path/my-project" becomes "foo/bar.c".
  EXPECT_EQ(trim_source_path("/some/remote/path/my-project/foo/bar.c", "", "/my/local/path/my-project"),
            "foo/bar.c");
  EXPECT_EQ(trim_source_path("/tally/workloads/split.cc", "", "../../peers/workloads"), "split.cc");
  // The first directory whose name occurs wins; none: the path stays.
  EXPECT_EQ(trim_source_path("/a/x/b/y/f.c", "", "/q/y:/q/x"), "f.c");
  EXPECT_EQ(trim_source_path("/a/x/f.c", "", "/q/z"), "/a/x/f.c");
}

TEST(TrimSourcePath, ConfiguredPrefixesAndProcSelfCwd) {
  EXPECT_EQ(trim_source_path("/tally/workloads/split.cc", "/tally/workloads", "/src"), "split.cc");
  EXPECT_EQ(trim_source_path("/tally/workloads/split.cc", "/other:/tally/", ""), "workloads/split.cc");
  // A configured trim path turns the guess off.
  EXPECT_EQ(trim_source_path("/x/src/f.c", "/nomatch", "/home/src"), "/x/src/f.c");
  EXPECT_EQ(trim_source_path("/proc/self/cwd/./lib/f.c", "", ""), "lib/f.c");
  EXPECT_EQ(trim_source_path("/proc/self/cwd/lib/f.c", "", ""), "lib/f.c");
  EXPECT_EQ(trim_source_path("lib/f.c", "", ""), "lib/f.c");
}

TEST(SourceFiles, SearchesEachDirectoryAndItsParents) {
  test::TempDir dir;
  const std::string root = dir.path();
  std::filesystem::create_directories(root + "/proj/src");
  std::filesystem::create_directories(root + "/proj/build/deep");
  test::write_bytes(root + "/proj/src/f.cc", "one\r\ntwo\n\nfour");
  SourceFiles sources(root + "/nothing:" + root + "/proj/build/deep", "");
  const auto* lines = sources.lines("src/f.cc");
  ASSERT_NE(lines, nullptr) << sources.error("src/f.cc");
  EXPECT_EQ(*lines, (std::vector<std::string>{"one", "two", "", "four"}));
  EXPECT_EQ(sources.lines("src/missing.cc"), nullptr);
  EXPECT_EQ(sources.error("src/missing.cc"),
            "could not find file src/missing.cc on path " + root + "/nothing:" + root +
                "/proj/build/deep");
  EXPECT_EQ(sources.lines("/no/such/abs.cc"), nullptr);
  EXPECT_EQ(sources.error("/no/such/abs.cc"), "open /no/such/abs.cc: no such file or directory");
  // Display names are trimmed with the search path as given, then cleaned.
  SourceFiles by_name(root + "/proj", "");
  EXPECT_EQ(by_name.display_name("/build/host/proj/src/./f.cc"), "src/f.cc");
  ASSERT_NE(by_name.lines("src/f.cc"), nullptr);
}

}  // namespace
}  // namespace tally::analyze
