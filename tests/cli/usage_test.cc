// The command line itself: help for every command, and usage errors exit with 2
// (src/cli/command.h: kUsage).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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

// daemon, flush, epoch, serve and push run in tally-net (src/cli/net_commands.h), so that
// the other commands load no network library.
std::string needed_libraries(const std::string& binary) {
  RunResult r = run({"readelf", "-d", binary});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  std::string needed;
  size_t at = 0;
  while ((at = r.out.find("(NEEDED)", at)) != std::string::npos) {
    const size_t end = r.out.find('\n', at);
    needed += r.out.substr(at, end - at) + "\n";
    at = end;
  }
  return needed;
}

TEST(CliNetCommands, TallyLoadsNoNetworkLibraryAndTallyNetDoes) {
  const std::string tally_needs = needed_libraries(tally_binary());
  const std::string net = (std::filesystem::path(tally_binary()).parent_path() / "tally-net").string();
  const std::string net_needs = needed_libraries(net);
  for (const char* library : {"libcurl", "httplib", "libssl", "libcrypto"})
    EXPECT_EQ(tally_needs.find(library), std::string::npos) << library << " in tally's:\n" << tally_needs;
  EXPECT_NE(net_needs.find("libcurl"), std::string::npos) << net_needs;
  EXPECT_NE(net_needs.find("httplib"), std::string::npos) << net_needs;
}

TEST(CliNetCommands, TheirArgumentsAndHelpReachTallyNet) {
  RunResult help = run_tally({"--help"});
  for (const char* name : {"daemon", "flush", "epoch", "serve", "push"})
    EXPECT_NE(help.out.find(std::string("\n  ") + name + " "), std::string::npos) << name << ":\n" << help.out;
  RunResult serve = run_tally({"serve", "--help"});
  EXPECT_EQ(serve.exit_code, 0) << serve.describe();
  EXPECT_NE(serve.out.find("--no-browser"), std::string::npos) << serve.out;
  RunResult daemon = run_tally({"daemon", "--help"});
  EXPECT_NE(daemon.out.find("--push-format"), std::string::npos) << daemon.out;
  RunResult push = run_tally({"push"});
  EXPECT_EQ(push.exit_code, 2) << push.describe();
  EXPECT_NE(push.err.find("FILE is required"), std::string::npos) << push.err;
  TempDir dir;
  RunResult flush = run_tally({"flush", "--db", dir.path()});
  EXPECT_EQ(flush.exit_code, 3) << flush.describe();
  EXPECT_NE(flush.err.find("no tally daemon is running on " + dir.path()), std::string::npos) << flush.err;
}

TEST(CliNetCommands, AMissingTallyNetIsAnIoErrorNamingIt) {
  TempDir dir;
  const std::string alone = dir.file("tally");
  std::filesystem::copy_file(tally_binary(), alone);
  RunResult r = run({alone, "serve", "--help"});
  EXPECT_EQ(r.exit_code, 3) << r.describe();
  EXPECT_NE(r.err.find("cannot run "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("libexec/tally/tally-net"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace tally::test
