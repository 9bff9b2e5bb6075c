// Peer test: valgrind's own callgrind files, read by tally and written again, look the same
// to callgrind_annotate. For every callgrind.out.* fixture, callgrind_annotate's tables
// (self costs, --inclusive=yes, and --tree=both where the fixture has that view stored) are
// compared between the original and tally's rewrite; only the line naming the data file
// may differ. The original's output is also checked against the stored
// FIXTURE.annotate.txt (made by `callgrind_annotate FIXTURE`, see MANIFEST.tsv), so the
// expected tables are the peer's, not tally's.
// callgrind_annotate itself prints two things in Perl's hash order, which changes from run
// to run of the same file: callers/callees of equal cost (--tree) and the auto-annotated
// source sections. Both are put in a fixed order before comparing (callgrind_peer_helpers.h).
#include <gtest/gtest.h>

#include <filesystem>

#include "callgrind_peer_helpers.h"
#include "callgrind_test_helpers.h"

namespace tally::callgrind::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> valgrind_fixtures() { return callgrind_files("fixtures/callgrind"); }

// The fixtures whose `--inclusive=yes --tree=both` view is stored.
std::string stored_tree_view(const std::string& fixture) {
  return fixture + ".annotate-inclusive-tree.txt";
}
std::vector<std::string> fixtures_with_tree_view() {
  std::vector<std::string> out;
  for (const std::string& f : valgrind_fixtures())
    if (fs::exists(stored_tree_view(f))) out.push_back(f);
  return out;
}

class CallgrindAnnotatePeer : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string annotate_path = callgrind_annotate_path();
    TALLY_REQUIRE_PEER(annotate_path, "callgrind_annotate");
    original_ = GetParam();
    fixture_dir_ = fs::path(original_).parent_path().string();
    core::Diagnostics diagnostics;
    const core::Profile profile = read_file(original_, diagnostics);
    auto text = write_callgrind(profile, WriteOptions{}, diagnostics);
    ASSERT_TRUE(text) << text.error().message;
    rewrite_ = temp_.file(fs::path(original_).filename().string() + ".tally");
    tally::test::write_bytes(rewrite_, *text);
  }

  // callgrind_annotate run from the fixture's folder, where the stored views were made.
  std::string view(const std::string& file, const std::vector<std::string>& options) const {
    return with_source_sections_sorted(
        with_tied_calls_sorted(without_file_name(annotate(file, options, fixture_dir_))));
  }

  void expect_same_view(const std::vector<std::string>& options) const {
    const std::string original = view(original_, options);
    const std::string rewrite = view(rewrite_, options);
    ASSERT_FALSE(original.empty());
    EXPECT_EQ(rewrite, original) << "callgrind_annotate options:" << joined(options);
  }

  static std::string joined(const std::vector<std::string>& options) {
    std::string s;
    for (const auto& o : options) s += " " + o;
    return s;
  }

  std::string original_, fixture_dir_, rewrite_;
  tally::test::TempDir temp_;
};

TEST_P(CallgrindAnnotatePeer, SelfCostTableIsTheSame) { expect_same_view({}); }

TEST_P(CallgrindAnnotatePeer, InclusiveTableIsTheSame) { expect_same_view({"--inclusive=yes"}); }

// The stored view is the original run of `callgrind_annotate FIXTURE`: tally's rewrite
// must print it again, file name aside.
TEST_P(CallgrindAnnotatePeer, RewriteMatchesStoredView) {
  const std::string stored = tally::test::read_text(original_ + ".annotate.txt");
  ASSERT_NE(stored.find("PROGRAM TOTALS"), std::string::npos);
  const std::string expected = with_source_sections_sorted(without_file_name(stored));
  EXPECT_EQ(view(original_, {}), expected)
      << "the installed callgrind_annotate no longer prints the stored view";
  EXPECT_EQ(view(rewrite_, {}), expected);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CallgrindAnnotatePeer, ::testing::ValuesIn(valgrind_fixtures()),
                         [](const auto& param_info) { return test_name(param_info.param); });

// Callers and callees of every function, with inclusive costs and call counts.
using CallgrindAnnotateTreePeer = CallgrindAnnotatePeer;

TEST_P(CallgrindAnnotateTreePeer, CallTreeIsTheSame) {
  const std::vector<std::string> options{"--inclusive=yes", "--tree=both"};
  expect_same_view(options);
  const std::string stored = tally::test::read_text(stored_tree_view(original_));
  ASSERT_NE(stored.find("  >   "), std::string::npos) << "the stored view has no callees";
  EXPECT_EQ(view(rewrite_, options),
            with_source_sections_sorted(with_tied_calls_sorted(without_file_name(stored))));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CallgrindAnnotateTreePeer,
                         ::testing::ValuesIn(fixtures_with_tree_view()),
                         [](const auto& param_info) { return test_name(param_info.param); });

// The stored views name the file they were made from: normalising must touch that line only.
TEST(CallgrindAnnotatePeerNormalise, OnlyTheDataFileNameIsReplaced) {
  const std::string text =
      "----\nProfile data file 'callgrind.out.1' (creator: callgrind-3.19.0)\n"
      "Profiled target:  ./a 'x' (PID 1)\n";
  EXPECT_EQ(without_file_name(text),
            "----\nProfile data file 'FILE' (creator: callgrind-3.19.0)\n"
            "Profiled target:  ./a 'x' (PID 1)\n");
  EXPECT_EQ(without_file_name(text, /*whole_line=*/true),
            "----\nProfile data file 'FILE'\nProfiled target:  ./a 'x' (PID 1)\n");
}

// Only adjacent call lines of one kind and equal cost are reordered.
TEST(CallgrindAnnotatePeerNormalise, OnlyTiedCallLinesAreReordered) {
  const std::string tree =
      "     19 ( 0.00%)  < z (1x)\n"
      "     19 ( 0.00%)  < a (1x)\n"
      "     40 ( 0.01%)  *  f\n"
      "     19 ( 0.00%)  >   y (1x)\n"
      "     19 ( 0.00%)  >   b (1x)\n"
      "     16 ( 0.00%)  >   c (1x)\n"
      "     16 ( 0.00%)  >   a (1x)\n";
  EXPECT_EQ(with_tied_calls_sorted(tree),
            "     19 ( 0.00%)  < a (1x)\n"
            "     19 ( 0.00%)  < z (1x)\n"
            "     40 ( 0.01%)  *  f\n"
            "     19 ( 0.00%)  >   b (1x)\n"
            "     19 ( 0.00%)  >   y (1x)\n"
            "     16 ( 0.00%)  >   a (1x)\n"
            "     16 ( 0.00%)  >   c (1x)\n");
  const std::string table = "20 (50%)  b\n20 (50%)  a\n";
  EXPECT_EQ(with_tied_calls_sorted(table), table);
}

// Source sections swap places; each keeps its text, and what follows them stays last.
TEST(CallgrindAnnotatePeerNormalise, SourceSectionsAreOrderedByFile) {
  const std::string fancy(80, '-');
  auto section = [&](const std::string& file, const std::string& body) {
    return fancy + "\n-- Auto-annotated source: " + file + "\n" + fancy + "\n" + body;
  };
  const std::string tail = fancy + "\nIr\n" + fancy + "\n24 ( 0.00%)  events annotated\n";
  const std::string head = "table\n\n";
  EXPECT_EQ(with_source_sections_sorted(head + section("/b.h", "2 x\n") + section("/a.h", "1 y\n") + tail),
            head + section("/a.h", "1 y\n") + section("/b.h", "2 x\n") + tail);
}

}  // namespace
}  // namespace tally::callgrind::test
