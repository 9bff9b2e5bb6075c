// The command line itself: help for every command, and usage errors exit with 2
// (src/cli/command.h: kUsage).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tally::test {
namespace {

TEST(CliUsage, MainHelpExitsZeroAndListsSubcommandsAndExitCodes) {
  RunResult r = run_tally({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cat"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("convert"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos) << r.out;
}

TEST(CliUsage, CatHelpExitsZeroAndMentionsItsOptions) {
  RunResult r = run_tally({"cat", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--summary"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FILE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("standard input"), std::string::npos) << r.out;
}

TEST(CliUsage, ConvertHelpExitsZeroAndMentionsItsOptions) {
  RunResult r = run_tally({"convert", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* word : {"--output", "--to", "INPUT", "gperf", "dcpi"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << " missing from:\n" << r.out;
}

TEST(CliUsage, NoSubcommandIsAUsageError) {
  RunResult r = run_tally({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(r.err.empty());
}

TEST(CliUsage, UnknownOptionIsAUsageError) {
  EXPECT_EQ(run_tally({"--no-such-option"}).exit_code, 2);
  EXPECT_EQ(run_tally({"cat", "--no-such-option", shared("fixtures/gperf/split.prof")}).exit_code,
            2);
  EXPECT_EQ(run_tally({"convert", shared("fixtures/gperf/split.prof"), "-o", "-", "--to", "gperf",
                       "--no-such-option"})
                .exit_code,
            2);
}

TEST(CliUsage, UnknownSubcommandIsAUsageError) {
  RunResult r = run_tally({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.err.empty());
}

TEST(CliUsage, MissingRequiredArgumentsAreUsageErrors) {
  EXPECT_EQ(run_tally({"cat"}).exit_code, 2);
  // --to and -o are both required.
  EXPECT_EQ(run_tally({"convert", shared("fixtures/gperf/split.prof"), "-o", "-"}).exit_code, 2);
  EXPECT_EQ(run_tally({"convert", shared("fixtures/gperf/split.prof"), "--to", "gperf"}).exit_code,
            2);
}

TEST(CliUsage, UnknownOutputFormatIsAUsageErrorNamingTheChoices) {
  TempDir dir;
  RunResult r = run_tally({"convert", shared("fixtures/gperf/split.prof"), "-o",
                           dir.file("out"), "--to", "nosuchformat"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nosuchformat"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gperf"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dcpi"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tally::test
