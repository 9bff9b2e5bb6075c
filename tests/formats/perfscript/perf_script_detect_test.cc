// looks_like_perf_script: claims every `perf script` file we have, in every form perf
// prints, and nothing else in ../shared (gperf, pprof, callgrind, perf report, specs...).
#include <gtest/gtest.h>

#include <filesystem>

#include "formats/perfscript/perf_script.h"
#include "io/gzip.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

bool looks_like(std::string_view text) {
  return perfscript::looks_like_perf_script(bytes_of(text));
}

bool is_perf_script_file(const std::filesystem::path& p) {
  return p.string().ends_with(".perf-script.txt") ||
         p.string().find("conformance/perf-script/") != std::string::npos;
}

TEST(PerfScriptDetect, ClaimsEveryPerfScriptFile) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(shared_dir())) {
    if (!entry.is_regular_file() || !is_perf_script_file(entry.path()) ||
        entry.path().filename() == "SOURCE")
      continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_TRUE(looks_like(read_text(entry.path().string())));
    ++files;
  }
  EXPECT_EQ(files, 11u);  // 7 speedscope files, 4 fixtures
}

TEST(PerfScriptDetect, ClaimsNothingElseInShared) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(shared_dir())) {
    const std::string path = entry.path().string();
    if (!entry.is_regular_file() || is_perf_script_file(entry.path()) ||
        path.find("/fixtures/bin/") != std::string::npos)
      continue;
    SCOPED_TRACE(path);
    auto bytes = read_bytes(path);
    EXPECT_FALSE(perfscript::looks_like_perf_script(bytes));
    if (io::is_gzip(bytes)) {
      auto inflated = io::gunzip(bytes, path);
      ASSERT_TRUE(inflated) << inflated.error().message;
      EXPECT_FALSE(perfscript::looks_like_perf_script(*inflated));
    }
    ++files;
  }
  EXPECT_GT(files, 100u);  // gperf, pprof, callgrind fixtures, perf reports, specs
}

TEST(PerfScriptDetect, FormsPerfPrints) {
  // No call chains: the frame is on the header line.
  EXPECT_TRUE(looks_like("           split 10562  4615.983828:    1001001 cpu-clock:      "
                         "7f18eb5f49b4 _dl_lookup_symbol_x+0x44 (/lib/ld.so)\n"));
  // --show-mmap-events: side-band lines before the first sample.
  EXPECT_TRUE(looks_like("split 10602  4619.906794: PERF_RECORD_MMAP2 10602/10602: [0x1(0x1) @ "
                         "0 0 0 0]: r-xp /bin/split\n"
                         "split 10602  4619.907778:    1001001  cpu-clock: \n"
                         "\t            1674 func_a+0x24 (/bin/split)\n"));
  // A header, and call chains with addresses only (-F comm,pid,time,event,ip).
  EXPECT_TRUE(looks_like("# ========\n# captured on    : Sun Nov 22 03:20:48 2026\n#\n"
                         "split 10602  4619.907778:  cpu-clock: \n\t            1674\n"));
}

TEST(PerfScriptDetect, RejectsLookAlikes) {
  EXPECT_FALSE(looks_like(""));
  EXPECT_FALSE(looks_like("# only a comment\n#\n"));
  EXPECT_FALSE(looks_like("main;run_rounds;func_a 274\nmain;func_b 204\n"));  // folded
  EXPECT_FALSE(looks_like("main 1.5: 3\n"));                                  // no pid
  EXPECT_FALSE(looks_like("name cycles\nversion pdb-0.07\nsamples\n"));      // DCPI header
  EXPECT_FALSE(looks_like("events: Ir\nfl=a.c\nfn=main\n16 20\n"));         // callgrind
  // A sample header, but no frame after it.
  EXPECT_FALSE(looks_like("split 13067   981.768286:    1000000 cpu-clock: \n\n"));
  EXPECT_FALSE(looks_like("split 13067   981.768286:    1000000 cpu-clock: \nmain\n"));
  // Binary bytes inside the first sample.
  const char binary[] = "split 1 1.0: 1 ev:\n\t10 f\0 (/p)\n";
  EXPECT_FALSE(looks_like(std::string(binary, sizeof(binary) - 1)));
}

}  // namespace
}  // namespace tally::test
