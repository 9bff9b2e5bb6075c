// Issue 5's must-show: the flame graph SVG opens in headless Chromium with no script
// error, and the hottest function's name is in the page. The script marks the root
// data-tally-ready="1" when its init finished; console errors are read from Chromium's
// log (--enable-logging=stderr), where they appear as "CONSOLE" lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include "support/test_support.h"

namespace tally::test {
namespace {

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string path = find_program(name);
    if (!path.empty()) return path;
  }
  return "";
}

RunResult run_chromium(const std::string& chromium, const std::string& mode,
                       const std::string& url) {
  return run({chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
              "--enable-logging=stderr", "--v=0", "--window-size=1200,800", mode, url});
}

// Console messages: uncaught exceptions and console.error/warn calls.
std::string console_lines(const std::string& log) {
  std::string out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.find(":CONSOLE") != std::string::npos) out += line + "\n";
  return out;
}

class FlameChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    TALLY_REQUIRE_PEER(chromium_, "chromium (apt-get install chromium)");
    auto r = run_tally({"flame", shared("fixtures/gperf/split.pb.gz"), "-o", dir_.file("split.svg")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    url_ = "file://" + dir_.file("split.svg");
  }
  std::string chromium_, url_;
  TempDir dir_;
};

TEST_F(FlameChromium, OpensWithoutScriptErrorsAndShowsTheHottestFunction) {
  const std::string png = dir_.file("split.png");
  auto shot = run_chromium(chromium_, "--screenshot=" + png, url_);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  ASSERT_TRUE(std::filesystem::exists(png));
  EXPECT_GT(std::filesystem::file_size(png), 1000u);  // a real image, not an empty file
  EXPECT_EQ(console_lines(shot.err), "");

  auto dom = run_chromium(chromium_, "--dump-dom", url_);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_EQ(console_lines(dom.err), "");
  EXPECT_NE(dom.out.find("data-tally-ready=\"1\""), std::string::npos) << "script did not finish";
  // func_a: 40% of the work in split (fixtures README), the widest leaf.
  EXPECT_NE(dom.out.find(">func_a</text>"), std::string::npos);
}

TEST_F(FlameChromium, SearchAndZoomFromTheUrl) {
  // func_a and func_b: 111 + 83 of 276 ms (split.pb.pprof-top.txt) = 70.29%.
  auto dom = run_chromium(chromium_, "--dump-dom", url_ + "#s=func_%5Bab%5D&z=func_b");
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_EQ(console_lines(dom.err), "");
  EXPECT_NE(dom.out.find("Matched: 70.29%"), std::string::npos);
  // Zoomed on func_b: it spans the full 1180 px; func_a, its sibling, is hidden.
  EXPECT_TRUE(std::regex_search(
      dom.out, std::regex("<title>func_b [^<]*</title><rect x=\"10.00\" y=\"\\d+\" "
                          "width=\"1180.00\"[^>]*fill=\"#e600e6\"")))
      << dom.out.substr(0, 4000);
  EXPECT_TRUE(std::regex_search(
      dom.out, std::regex("<g [^>]*style=\"display: none;\"><title>func_a ")));
}

}  // namespace
}  // namespace tally::test
