// Real Debian programs whose libraries are stripped to .dynsym (xz with liblzma, sqlite3
// with libsqlite3), recorded with tally record: every sampled address of the library lands
// in a function row whose start is the start of one of its FDEs, as binutils' readelf
// lists them, and every report shows those rows under the same name.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace tally::test {
namespace {

namespace fs = std::filesystem;

// The starts of every FDE of `library`, from readelf --debug-dump=frames.
std::set<uint64_t> fde_starts(const std::string& library) {
  const std::string readelf = find_program("readelf");
  EXPECT_FALSE(readelf.empty());
  RunResult r = run({readelf, "--debug-dump=frames", library});
  std::set<uint64_t> starts;
  std::regex fde(R"( FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.)");
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, fde)) starts.insert(std::stoull(match[1].str(), nullptr, 16));
  }
  return starts;
}

struct Recorded {
  std::string profile;
  std::string library_name;  // as the mapping names it: "liblzma.so.5.4.1"
  std::set<uint64_t> starts;
  std::string record_err;  // what tally record said on stderr
};

// Records `command` (perf_event_open: CI runs as root) and finds `library`'s real file.
Recorded record(const TempDir& dir, const std::string& library, std::vector<std::string> command) {
  Recorded recorded;
  recorded.profile = dir.file("recorded.pb.gz");
  const std::string real = fs::canonical(library).string();
  recorded.library_name = fs::path(real).filename().string();
  recorded.starts = fde_starts(real);
  std::vector<std::string> args{"record", "-g", "dwarf", "-F", "2000", "-o", recorded.profile, "--"};
  args.insert(args.end(), command.begin(), command.end());
  RunResult r = run_tally(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  recorded.record_err = r.err;
  return recorded;
}

// Checks the rows of `tally top` that belong to the library, and every other report.
// `min_unnamed`: the share (%) the library's functions without a symbol must carry at least.
void expect_function_rows(const Recorded& recorded, double min_unnamed) {
  ASSERT_GT(recorded.starts.size(), 100u) << "readelf listed too few FDEs";
  RunResult top = run_tally({"top", "--nodecount=100000", recorded.profile});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const std::regex row("^" + std::regex_replace(recorded.library_name, std::regex(R"([.+])"), R"(\$&)") +
                       "!sub_([0-9a-f]+)$");
  double in_functions = 0;
  std::string hottest;
  double hottest_flat = -1;
  for (const TopRow& r : top_rows(top.out)) {
    EXPECT_EQ(r.name.find("[" + recorded.library_name), std::string::npos)
        << "an address of the library outside any function row: " << r.name;
    std::smatch match;
    if (!std::regex_match(r.name, match, row)) continue;
    const uint64_t start = std::stoull(match[1].str(), nullptr, 16);
    EXPECT_TRUE(recorded.starts.count(start)) << r.name << " does not start at an FDE's start";
    const double flat = std::stod(r.flat_percent);
    in_functions += flat;
    if (flat > hottest_flat) hottest_flat = flat, hottest = r.name;
  }
  EXPECT_GT(in_functions, min_unnamed) << "the library's unnamed functions' share:\n" << top.out;
  ASSERT_FALSE(hottest.empty()) << top.out;

  // The same name in every report, record's written profile and the conversions.
  const std::string sub = hottest.substr(hottest.find("!sub_") + 1);
  for (std::vector<std::string> report : std::vector<std::vector<std::string>>{
           {"peek", sub}, {"tree"}, {"traces"}, {"diff", recorded.profile}, {"disasm", sub + "$"}}) {
    report.push_back(recorded.profile);
    RunResult r = run_tally(report);
    EXPECT_EQ(r.exit_code, 0) << report[0] << ": " << r.err;
    EXPECT_NE(r.out.find(hottest), std::string::npos) << report[0] << " does not show " << hottest;
  }
  TempDir out;
  RunResult flame = run_tally({"flame", recorded.profile, "-o", out.file("flame.svg")});
  EXPECT_EQ(flame.exit_code, 0) << flame.err;
  EXPECT_NE(read_text(out.file("flame.svg")).find(hottest), std::string::npos);
  RunResult folded = run_tally({"convert", recorded.profile, "--to", "folded", "-o", out.file("out.folded")});
  EXPECT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_NE(read_text(out.file("out.folded")).find(hottest), std::string::npos);
}

// The lines of `text` that contain `part`.
std::vector<std::string> lines_with(const std::string& text, const std::string& part) {
  std::vector<std::string> found;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find(part) != std::string::npos) found.push_back(line);
  return found;
}

// The library without debug symbols is one short warning line of record's (which file, why,
// what would name its functions), and one summary line in the header of each report.
void expect_missing_symbols_said_once(const Recorded& recorded) {
  const std::vector<std::string> warned = lines_with(recorded.record_err, recorded.library_name);
  ASSERT_EQ(warned.size(), 1u) << recorded.record_err;
  const std::string& w = warned.front();
  EXPECT_TRUE(w.starts_with("tally: warning: /")) << w;
  EXPECT_NE(w.find(recorded.library_name + ": no debug symbols (.dynsym only)"), std::string::npos) << w;
  EXPECT_NE(w.find("-dbgsym package"), std::string::npos) << w;
  EXPECT_LT(w.size(), 200u) << w;
  EXPECT_EQ(recorded.record_err.find("/usr/lib/debug"), std::string::npos)
      << "the debug file paths searched are not listed:\n" << recorded.record_err;

  RunResult top = run_tally({"top", recorded.profile});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const std::string header = top.out.substr(0, top.out.find("\n      flat"));
  const std::vector<std::string> said = lines_with(header, "no debug symbols");
  ASSERT_EQ(said.size(), 1u) << header;
  EXPECT_TRUE(std::regex_search(
      said.front(), std::regex("^symbols: [1-9][0-9]* of [1-9][0-9]* binaries have no debug "
                               "symbols \\(\\.dynsym only\\): .*\\b" +
                               std::regex_replace(recorded.library_name, std::regex(R"([.+])"), R"(\$&)") +
                               "(, |$)")))
      << said.front();
  EXPECT_EQ(header.find("/usr/lib/debug"), std::string::npos) << header;
}

TEST(StrippedPrograms, XzWithLiblzma) {
  TempDir dir;
  // 6 MB that compress somewhat: text-like lines with a counter.
  std::string input;
  for (int i = 0; input.size() < (6u << 20); ++i)
    input += "line " + std::to_string(i * 7919 % 100003) + " of the bench input, with some words\n";
  write_bytes(dir.file("input.txt"), input);
  Recorded recorded = record(dir, "/lib/x86_64-linux-gnu/liblzma.so.5",
                             {"xz", "-6", "-T1", "-k", "-f", dir.file("input.txt")});
  // liblzma exports its API only: its match finders and encoders have no symbol.
  expect_function_rows(recorded, 50.0);
  expect_missing_symbols_said_once(recorded);
}

TEST(StrippedPrograms, Sqlite3WithLibsqlite3) {
  TempDir dir;
  const std::string sqlite3 = find_program("sqlite3");
  TALLY_REQUIRE_PEER(sqlite3, "sqlite3");
  Recorded recorded = record(dir, "/lib/x86_64-linux-gnu/libsqlite3.so.0",
                             {sqlite3, ":memory:",
                              "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                              "LIMIT 2000000) SELECT sum(x * x % 7) FROM c;"});
  // Debian's libsqlite3 exports most of its functions (sqlite3VdbeExec...): 18% here
  // were static ones.
  expect_function_rows(recorded, 5.0);
}

}  // namespace
}  // namespace tally::test
