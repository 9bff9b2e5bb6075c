// Detection from content, over every profile in ../shared: the format each file is in is
// known from where it lives and how the fixtures README says it was made (a .prof under
// fixtures/gperf is gperftools' own output, a .pprof-callgrind.txt is `pprof -callgrind`,
// ...), so each expectation is independent of tally's detectors.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "formats/format.h"
#include "io/input.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

namespace fs = std::filesystem;
using formats::Format;

struct Expectation {
  std::string folder;  // under ../shared
  std::string suffix;  // files whose name ends so
  std::string prefix;  // and starts so ("" for any)
  Format format;
};

const std::vector<Expectation>& expectations() {
  static const std::vector<Expectation> e = {
      {"fixtures/gperf", ".prof", "", Format::gperf},
      {"fixtures/gperf", ".pb.gz", "", Format::pprof},
      {"fixtures/gperf", ".pprof-callgrind.txt", "", Format::callgrind},
      {"fixtures/callgrind", "", "callgrind.out.", Format::callgrind},
      {"fixtures/perf", ".perf-script.txt", "", Format::perf_script},
      {"conformance/callgrind/gprof2dot", ".callgrind", "", Format::callgrind},
      {"conformance/callgrind/speedscope", ".log", "", Format::callgrind},
      {"conformance/pprof/speedscope", ".prof", "", Format::pprof},
      {"conformance/perf-script/speedscope", ".txt", "", Format::perf_script},
  };
  return e;
}

bool matches(const std::string& name, const Expectation& e) {
  if (!name.starts_with(e.prefix) || !name.ends_with(e.suffix)) return false;
  // callgrind_annotate's views sit beside the callgrind files: they are not profiles.
  return !(e.format == Format::callgrind && name.ends_with(".annotate.txt")) &&
         !name.ends_with(".annotate-inclusive-tree.txt");
}

TEST(DetectSharedFiles, EveryProfileIsClaimedByItsOwnFormat) {
  size_t checked = 0;
  for (const Expectation& e : expectations()) {
    size_t in_folder = 0;
    for (const auto& entry : fs::directory_iterator(shared(e.folder))) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || !matches(name, e)) continue;
      auto input = io::Input::open(entry.path().string());
      ASSERT_TRUE(input) << input.error().message;
      EXPECT_EQ(formats::format_name(formats::detect(input->bytes())), formats::format_name(e.format))
          << entry.path();
      ++in_folder;
    }
    EXPECT_GT(in_folder, 0u) << "no files matched in " << e.folder;
    checked += in_folder;
  }
  EXPECT_GT(checked, 60u);
}

TEST(DetectSharedFiles, PeerReportsAreNotProfiles) {
  // What callgrind_annotate, pprof -top and perf report print must not pass for a profile.
  size_t checked = 0;
  for (const char* folder : {"fixtures/callgrind", "fixtures/gperf", "fixtures/perf"}) {
    for (const auto& entry : fs::directory_iterator(shared(folder))) {
      const std::string name = entry.path().filename().string();
      if (!(name.ends_with(".annotate.txt") || name.ends_with("-top.txt") ||
            name.ends_with(".perf-report.txt")))
        continue;
      auto input = io::Input::open(entry.path().string());
      ASSERT_TRUE(input) << input.error().message;
      const Format f = formats::detect(input->bytes());
      EXPECT_EQ(f, Format::unknown)
          << entry.path() << " detected as " << formats::format_name(f);
      ++checked;
    }
  }
  EXPECT_GT(checked, 20u);
}

}  // namespace
}  // namespace tally::test
