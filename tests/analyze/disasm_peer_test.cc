// `tally disasm` against the real `pprof -disasm` (which runs llvm-objdump here): the same
// ROUTINE blocks with the same flat/cum totals, the same instruction addresses with the
// same per-instruction values, the same mnemonics and the same function/source-line
// annotations. The instruction text itself may differ in syntax details (capstone writes
// immediates in hex; llvm-objdump prints a lock prefix as an instruction of its own, whose
// line is merged here into the instruction it prefixes).
//
// pprof -disasm places samples with the load base of the first graph node it meets, in Go's
// random map order: when that node is in another object, every address is wrong and it
// reports "no matches" or misplaced samples. The tests give both tools the same -show
// filter so that only the nodes of one object are in the graph and pprof is deterministic.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/test_support.h"

namespace tally::test {
namespace {

namespace fs = std::filesystem;

std::string gperf_dir() { return shared("fixtures/gperf"); }
std::string bin_dir() { return shared("fixtures/bin"); }

struct Listing {
  std::vector<std::string> headers;  // Total, ROUTINE, AKA and the (flat, cum) lines
  // address, flat, cum, mnemonic
  std::vector<std::tuple<std::string, std::string, std::string, std::string>> instructions;
  std::map<std::string, std::string> locations;  // address -> "function file:line"
};

bool is_prefix(const std::string& mnemonic) {
  return mnemonic == "lock" || mnemonic == "rep" || mnemonic == "repne" || mnemonic == "notrack";
}

Listing parse(const std::string& text) {
  static const std::regex kInsn(R"(^ *(\S+) +(\S+) +([0-9a-f]+): (.*)$)");
  static const std::regex kLongLocation(R"(^ {74};(.*)$)");
  Listing l;
  std::string pending_location;
  std::optional<std::tuple<std::string, std::string, std::string, std::string>> prefix;
  for (const std::string& line : text_lines(text)) {
    std::smatch m;
    if (line.starts_with("Total:") || line.starts_with("ROUTINE") || line.starts_with("    AKA") ||
        line.find("(flat, cum)") != std::string::npos) {
      l.headers.push_back(line);
    } else if (std::regex_match(line, m, kLongLocation)) {
      pending_location = m[1];
    } else if (std::regex_match(line, m, kInsn)) {
      std::string rest = m[4];
      std::string location = pending_location;
      pending_location.clear();
      // A short instruction has its location after column 40: "text<pad>;location".
      if (rest.size() > 41 && rest[40] == ';') {
        location = rest.substr(41);
        rest.resize(40);
      }
      const std::string mnemonic = rest.substr(0, rest.find_first_of(" \t"));
      if (!location.empty()) l.locations[m[3]] = location;
      if (is_prefix(mnemonic) && rest.find_first_not_of(" ", mnemonic.size()) == std::string::npos) {
        prefix.emplace(m[3], m[1], m[2], mnemonic);  // llvm-objdump's lone prefix line
        continue;
      }
      if (prefix) {
        auto [address, flat, cum, name] = *prefix;
        prefix.reset();
        l.instructions.emplace_back(address, flat == "." ? m[1].str() : flat,
                                    cum == "." ? m[2].str() : cum, name);
        continue;
      }
      l.instructions.emplace_back(m[3], m[1], m[2], mnemonic);
    }
  }
  return l;
}

void expect_same_disasm(const std::string& pprof_out, const std::string& tally_out) {
  const Listing want = parse(pprof_out), got = parse(tally_out);
  ASSERT_GT(want.instructions.size(), 10u) << pprof_out;
  EXPECT_EQ(got.headers, want.headers);
  EXPECT_EQ(got.instructions, want.instructions);
  EXPECT_EQ(got.locations, want.locations);
}

struct Case {
  std::string profile;  // in fixtures/gperf
  std::string binary;   // in fixtures/bin
  std::string show;     // the frames of one object
};
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"split", "split", "^func_|^run_rounds"},
      {"split-nofp", "split-nofp", "^func_|^run_rounds"},
      {"split-mt", "split", "^func_|^run_rounds"},
      {"split-f100", "split", "^func_|^run_rounds"},
      {"shlib", "shlib_main", "^lib_"},
      {"shlib", "shlib_main", "^main_local|^run_rounds"},
      {"shlib-nofp", "shlib_main-nofp", "^lib_"},
      {"deep", "deep", "leaf|descend"},
  };
  return all;
}

RunResult in_gperf_dir(std::vector<std::string> argv, const Environment& environment = {}) {
  return run(argv, {.cwd = gperf_dir(), .environment = environment});
}

TEST(DisasmVsPprof, PprofFixtures) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.profile + " " + c.show);
    const std::string file = c.profile + ".pb.gz";  // names ../bin/EXE: run in fixtures/gperf
    const RunResult want = in_gperf_dir({pprof, "-disasm=.", "-show=" + c.show, file});
    ASSERT_EQ(want.exit_code, 0) << want.err;
    const RunResult got = in_gperf_dir({tally_binary(), "disasm", ".", "--show", c.show, file});
    ASSERT_EQ(got.exit_code, 0) << got.err;
    expect_same_disasm(want.out, got.out);
  }
}

// The gperftools files, symbolized and disassembled from fixtures/bin by both tools.
TEST(DisasmVsPprof, GperfProfilesWithTheirBinaries) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  const Environment binaries = {{"PPROF_BINARY_PATH", bin_dir()}};
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.profile + " " + c.show);
    const std::string prof = c.profile + ".prof";
    const RunResult want =
        in_gperf_dir({pprof, "-disasm=.", "-show=" + c.show, bin_dir() + "/" + c.binary, prof}, binaries);
    ASSERT_EQ(want.exit_code, 0) << want.err;
    const RunResult got =
        in_gperf_dir({tally_binary(), "disasm", ".", "--show", c.show, prof}, binaries);
    ASSERT_EQ(got.exit_code, 0) << got.err;
    expect_same_disasm(want.out, got.out);
  }
}

int64_t millis(const std::string& v) { return v == "." ? 0 : std::stoll(v); }

// Must show: the known hot loop. func_a's samples all fall inside its loop (from the
// target of the backward jump to that jump), and the loop is the burner's line of split.cc.
TEST(DisasmMustShow, FuncASamplesAreInItsLoop) {
  const RunResult r = in_gperf_dir({tally_binary(), "disasm", "^func_a$", "--binary-path",
                                    bin_dir(), "split.prof"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Listing l = parse(r.out);
  ASSERT_GT(l.instructions.size(), 5u) << r.out;
  // The loop: a conditional jump back to an earlier address of the function.
  static const std::regex kBackJump(R"(^ *\S+ +\S+ +([0-9a-f]+): j(?!mp)\w+\t0x([0-9a-f]+) <func_a\+)");
  uint64_t loop_begin = 0, loop_end = 0;
  for (const std::string& line : text_lines(r.out)) {
    std::smatch m;
    if (std::regex_search(line, m, kBackJump) &&
        std::stoull(m[2], nullptr, 16) < std::stoull(m[1], nullptr, 16)) {
      loop_begin = std::stoull(m[2], nullptr, 16);
      loop_end = std::stoull(m[1], nullptr, 16);
    }
  }
  ASSERT_NE(loop_end, 0u) << r.out;
  int64_t in_loop = 0, total = 0;
  for (const auto& [address, flat, cum, mnemonic] : l.instructions) {
    const uint64_t a = std::stoull(address, nullptr, 16);
    total += millis(flat);
    if (a >= loop_begin && a <= loop_end) in_loop += millis(flat);
  }
  EXPECT_EQ(total, 111) << r.out;  // func_a's flat in split.pprof-top.txt
  EXPECT_EQ(in_loop, total) << r.out;
  // The loop's source line: func_a's line in split.cc, where TALLY_BURN_BODY expands.
  const auto source = text_lines(read_text(shared("peers/workloads/split.cc")));
  size_t func_a_line = 0;
  for (size_t i = 0; i < source.size(); ++i)
    if (source[i].find("void func_a(") != std::string::npos) func_a_line = i + 1;
  ASSERT_NE(func_a_line, 0u);
  std::string location;
  for (const auto& [address, where] : l.locations)
    if (std::stoull(address, nullptr, 16) <= loop_begin) location = where;
  EXPECT_EQ(location, "func_a split.cc:" + std::to_string(func_a_line)) << r.out;
}

// On a callgrind file with instruction positions every instruction of the burner's loop
// runs once per iteration: func_a runs 4 units of 1,000,000 iterations per round, and the
// file's command line gives the rounds.
TEST(DisasmMustShow, CallgrindInstructionCostsAreTheIterations) {
  const std::string file = shared("fixtures/callgrind/callgrind.out.split.instr-line");
  const std::string text = read_text(file);
  std::smatch m;
  static const std::regex kRounds(R"(cmd: .*split -r (\d+))");
  ASSERT_TRUE(std::regex_search(text, m, kRounds));
  const int64_t iterations = std::stoll(m[1]) * 4 * 1000000;
  const RunResult r = run_tally({"disasm", "^func_a$", "--binary-path", bin_dir(), file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Listing l = parse(r.out);
  int loop_instructions = 0;
  for (const auto& [address, flat, cum, mnemonic] : l.instructions) {
    const int64_t cost = flat == "." ? 0 : std::stoll(flat);
    if (cost == iterations) ++loop_instructions;
    else EXPECT_LE(cost, 2) << address << " " << mnemonic;  // once per call: 2 calls
  }
  EXPECT_EQ(loop_instructions, 5) << r.out;  // imul, add, add, cmp, jne (burn.h)
}

TEST(DisasmSyntax, IntelHasTheSameInstructionsAndValues) {
  auto run_with = [](const std::vector<std::string>& extra) {
    std::vector<std::string> argv{tally_binary(), "disasm", "^func_a$|^run_rounds$"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("split.pb.gz");
    return in_gperf_dir(argv);
  };
  const RunResult att = run_with({}), intel = run_with({"--intel"});
  ASSERT_EQ(att.exit_code, 0) << att.err;
  ASSERT_EQ(intel.exit_code, 0) << intel.err;
  const Listing a = parse(att.out), i = parse(intel.out);
  ASSERT_EQ(a.instructions.size(), i.instructions.size());
  for (size_t k = 0; k < a.instructions.size(); ++k) {
    EXPECT_EQ(std::get<0>(a.instructions[k]), std::get<0>(i.instructions[k]));
    EXPECT_EQ(std::get<1>(a.instructions[k]), std::get<1>(i.instructions[k]));
    EXPECT_EQ(std::get<2>(a.instructions[k]), std::get<2>(i.instructions[k]));
  }
  EXPECT_EQ(a.locations, i.locations);
  EXPECT_NE(att.out.find("imulq\t%rcx, %rax"), std::string::npos) << att.out;
  EXPECT_NE(intel.out.find("imul\trax, rcx"), std::string::npos) << intel.out;
  EXPECT_NE(att.out.find("callq\t0x1650 <func_a>"), std::string::npos) << att.out;
}

// Without any symbol table the functions come from DWARF (their exact extent, without the
// padding after them): the same values at the same addresses.
TEST(DisasmRanges, DwarfWhenTheSymbolTableIsStripped) {
  const std::string objcopy = find_program("objcopy");
  TALLY_REQUIRE_PEER(objcopy, "objcopy");
  TempDir dir;
  const RunResult strip = run({objcopy, "--strip-all", "--keep-section=.debug_*",
                               bin_dir() + "/split", dir.file("split")});
  ASSERT_EQ(strip.exit_code, 0) << strip.err;
  const RunResult full = run_tally({"disasm", "^func_a$", "--binary-path", bin_dir(),
                                    gperf_dir() + "/split.prof"});
  const RunResult dwarf = run_tally({"disasm", "^func_a$", "--binary-path", dir.path(),
                                     gperf_dir() + "/split.prof"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(dwarf.exit_code, 0) << dwarf.err;
  const Listing f = parse(full.out), d = parse(dwarf.out);
  EXPECT_EQ(d.headers, f.headers);
  ASSERT_GT(d.instructions.size(), 10u);
  ASSERT_LT(d.instructions.size(), f.instructions.size());  // no padding
  for (size_t k = 0; k < d.instructions.size(); ++k) EXPECT_EQ(d.instructions[k], f.instructions[k]);
}

TEST(DisasmErrors, MissingAndDamagedBinaries) {
  TempDir dir;
  // The profile names ../bin/split, not there from this directory.
  RunResult r = run({tally_binary(), "disasm", "func_a", gperf_dir() + "/split.pb.gz"}, "", dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("disasm: ../bin/split: binary not found; searched ../bin/split"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no matches found for regexp: func_a"), std::string::npos) << r.err;
  // A truncated binary: a clear outcome, no crash.
  const std::vector<uint8_t> bytes = read_bytes(bin_dir() + "/split");
  for (size_t size : {size_t{64}, size_t{3000}, bytes.size() / 2}) {
    write_bytes(dir.file("split"), std::string(bytes.begin(), bytes.begin() + static_cast<long>(size)));
    r = run_tally({"disasm", "func_a", "--binary-path", dir.path(), gperf_dir() + "/split.prof"});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << size << ": " << r.exit_code << r.err;
  }
  r = run_tally({"disasm", "(", gperf_dir() + "/split.pb.gz"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("invalid regex"), std::string::npos) << r.err;
  r = run_tally({"disasm", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--intel"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tally::test
