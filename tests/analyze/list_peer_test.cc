// `tally list` against the real `pprof -list` (same header, ROUTINE blocks, source lines
// and per-line flat/cum) on the pprof fixtures and on the gperftools fixtures symbolized
// from their binaries, and on callgrind files against callgrind_annotate's annotated
// source (self cost per line, the calls' inclusive cost under their call line). The
// workloads' DWARF names /tally/workloads/*.cc, a fake path: --source-path (pprof's
// -source_path) finds them in ../shared/peers/workloads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace tally::test {
namespace {

namespace fs = std::filesystem;

std::string gperf_dir() { return shared("fixtures/gperf"); }
std::string workloads() { return shared("peers/workloads"); }

// tally's output as pprof would print it: without what tally adds where a source file is
// missing (a hint and the sampled lines' numbers) and without blocks for code no binary
// resolved ("[lib+0x12]", tally's name for it) unless the profile had that name already
// (`pprof_text` has it then).
std::string as_pprof_prints(const std::string& text, const std::string& pprof_text = "") {
  std::string out;
  bool after_error = false;
  for (const std::string& line : text_lines(text)) {
    if (line.starts_with("ROUTINE") || line.starts_with("No source")) after_error = false;
    if (after_error || line.starts_with(" (source not found")) continue;
    // What no symbol names has no source: tally says so, pprof has no such function.
    if (line.starts_with("No source information for ") && as_pprof_names(line) != line &&
        pprof_text.find(line + "\n") == std::string::npos)
      continue;
    if (line.starts_with(" Error:")) after_error = true;
    out += line + "\n";
  }
  return out;
}

RunResult run_pprof(std::vector<std::string> args, const std::string& cwd,
                    const Environment& environment = {}) {
  args.insert(args.begin(), find_pprof());
  return run(args, {.cwd = cwd, .environment = environment});
}

RunResult run_tally_in(std::vector<std::string> args, const std::string& cwd) {
  args.insert(args.begin(), tally_binary());
  return run(args, "", cwd);
}

void expect_same_list(const std::string& file, const std::vector<std::string>& pprof_args,
                      const std::vector<std::string>& tally_args) {
  std::vector<std::string> p = pprof_args, t = tally_args;
  p.push_back(file);
  t.push_back(file);
  const RunResult want = run_pprof(p, gperf_dir());
  ASSERT_EQ(want.exit_code, 0) << want.err;
  ASSERT_NE(want.out.find("ROUTINE ===="), std::string::npos) << want.out;
  const RunResult got = run_tally_in(t, gperf_dir());
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(as_pprof_prints(got.out, want.out), want.out);
}

std::vector<std::string> pb_fixtures() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(gperf_dir()))
    if (e.path().filename().string().ends_with(".pb.gz")) files.push_back(e.path().filename());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ListVsPprof, EveryPprofFixture) {
  TALLY_REQUIRE_PEER(find_pprof(), "pprof");
  const auto files = pb_fixtures();
  ASSERT_GE(files.size(), 5u);
  const std::string w = workloads();
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    // The trim path guessed from the source path's name ("/workloads/"), and given.
    expect_same_list(file, {"-list=.", "-source_path=" + w}, {"list", ".", "--source-path", w});
    expect_same_list(file, {"-list=func|lib|leaf", "-source_path=" + w, "-trim_path=/tally/workloads"},
                     {"list", "func|lib|leaf", "--source-path", w, "--trim-path", "/tally/workloads"});
    // No source path: nothing found (pprof's errors), the same blocks and totals.
    expect_same_list(file, {"-list=run_rounds|main"}, {"list", "run_rounds|main"});
    expect_same_list(file, {"-list=.", "-noinlines", "-source_path=" + w},
                     {"list", ".", "--no-inlines", "--source-path", w});
    expect_same_list(file, {"-list=run_rounds", "-sample_index=samples", "-source_path=" + w},
                     {"list", "run_rounds", "--sample-index", "samples", "--source-path", w});
  }
}

TEST(ListVsPprof, Filters) {
  TALLY_REQUIRE_PEER(find_pprof(), "pprof");
  const std::string w = workloads();
  for (const char* file : {"split.pb.gz", "shlib.pb.gz"}) {
    SCOPED_TRACE(file);
    expect_same_list(file, {"-list=.", "-focus=func_a|lib_hot", "-source_path=" + w},
                     {"list", ".", "--focus", "func_a|lib_hot", "--source-path", w});
    expect_same_list(file, {"-list=run_rounds", "-ignore=func_b|lib_cold", "-source_path=" + w},
                     {"list", "run_rounds", "--ignore", "func_b|lib_cold", "--source-path", w});
    expect_same_list(file, {"-list=.", "-hide=func_a|lib_hot", "-source_path=" + w},
                     {"list", ".", "--hide", "func_a|lib_hot", "--source-path", w});
  }
}

// tally symbolizes the gperftools files from fixtures/bin itself, and knows each function's
// first line (pprof's symbolizer does not, so its listings start 5 lines above the first
// sampled line). Written to pprof format, pprof lists tally's symbolization identically;
// and pprof's own listing of the .prof has the same per-line numbers.
TEST(ListVsPprof, GperfProfilesSymbolizedByTally) {
  TALLY_REQUIRE_PEER(find_pprof(), "pprof");
  TempDir dir;
  const std::string w = workloads(), bin = shared("fixtures/bin");
  for (const GperfFixture& f : gperf_fixtures()) {
    SCOPED_TRACE(f.name);
    const std::string prof = gperf_dir() + "/" + f.name + ".prof";
    const std::string pb = dir.file(f.name + ".pb.gz");
    RunResult c = run_tally({"convert", prof, "--symbolize", "--binary-path", bin, "--to", "pprof",
                             "-o", pb});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    expect_same_list(pb, {"-list=.", "-source_path=" + w}, {"list", ".", "--source-path", w});

    // The .prof itself: pprof symbolizes with the binaries; compare the sampled lines and
    // the blocks, by the source file's base name: for libc, addr2line names the file
    // "./csu/../sysdeps/x.h" (pprof cleans it to "sysdeps/x.h"), tally's libdw lookup
    // "../sysdeps/x.h".
    // pprof finds the shared libraries through PPROF_BINARY_PATH (fixtures/README.md).
    const RunResult want = run_pprof({"-list=.", "-source_path=" + w, bin + "/" + f.binary, prof},
                                     gperf_dir(), {{"PPROF_BINARY_PATH", bin}});
    ASSERT_EQ(want.exit_code, 0) << want.err;
    const RunResult got =
        run_tally_in({"list", ".", "--source-path", w, "--binary-path", bin, prof}, gperf_dir());
    ASSERT_EQ(got.exit_code, 0) << got.err;
    auto sampled = [](const std::string& text) {
      static const std::regex kSampled(R"(^ +(\S+) +(\S+) +(\d+):.*$)");
      static const std::regex kRoutineFile(R"(^(ROUTINE =+ .* in )(.*/)?([^/]*)$)");
      std::vector<std::string> out;
      for (const std::string& line : text_lines(as_pprof_prints(text))) {
        std::smatch m;
        if (!line.starts_with(" ") || line.find("(flat, cum)") != std::string::npos) {
          out.push_back(std::regex_replace(line, kRoutineFile, "$1$3"));  // ROUTINE, totals
        } else if (std::regex_match(line, m, kSampled) && (m[1] != "." || m[2] != ".")) {
          out.push_back(m[1].str() + " " + m[2].str() + " " + m[3].str());
        }
      }
      return out;
    };
    const auto want_lines = sampled(want.out);
    ASSERT_GT(want_lines.size(), 5u) << want.out;
    EXPECT_EQ(sampled(got.out), want_lines) << got.out;
  }
}

// The line of split.cc that holds `word` (the workloads are read, not assumed).
int source_line(const std::string& file, const std::string& word) {
  const auto lines = text_lines(read_text(workloads() + "/" + file));
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(word) != std::string::npos) return static_cast<int>(i + 1);
  return 0;
}

// Must show: the known hot loop. The burner's loop body is the func_a line of split.cc (the
// TALLY_BURN_BODY macro expands there): it is the hottest line of the whole listing, and
// run_rounds' call lines carry func_a > func_b > func_c > func_d.
TEST(ListMustShow, HottestLineIsTheBurnersLoop) {
  const int func_a_line = source_line("split.cc", "void func_a(");
  ASSERT_GT(func_a_line, 0);
  ASSERT_NE(read_text(workloads() + "/split.cc").find("TALLY_BURN_BODY(n, 0xa1)"), std::string::npos);
  const RunResult r = run_tally_in({"list", ".", "--source-path", workloads(), "--binary-path",
                                    shared("fixtures/bin"), "split.prof"},
                                   gperf_dir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  static const std::regex kLine(R"(^ +(\S+) +(\S+) +(\d+):(.*)$)");
  std::string routine, hottest_routine, hottest_text;
  double hottest = 0;
  int hottest_line = 0;
  std::map<int, double> run_rounds_cum;
  auto ms = [](const std::string& v) { return v == "." ? 0.0 : std::stod(v); };
  for (const std::string& line : text_lines(r.out)) {
    if (line.starts_with("ROUTINE")) routine = line;
    std::smatch m;
    if (!std::regex_match(line, m, kLine)) continue;
    ASSERT_TRUE(m[1] == "." || m[1].str().ends_with("ms")) << line;
    if (ms(m[1]) > hottest) {
      hottest = ms(m[1]);
      hottest_line = std::stoi(m[3]);
      hottest_routine = routine;
      hottest_text = m[4];
    }
    if (routine.find("run_rounds in split.cc") != std::string::npos)
      run_rounds_cum[std::stoi(m[3])] = ms(m[2]);
  }
  EXPECT_EQ(hottest_line, func_a_line) << r.out;
  EXPECT_NE(hottest_routine.find("func_a in split.cc"), std::string::npos) << hottest_routine;
  EXPECT_NE(hottest_text.find("TALLY_BURN_BODY"), std::string::npos) << hottest_text;
  const int a = source_line("split.cc", "func_a(4 * unit)"), d = source_line("split.cc", "func_d(1 * unit)");
  ASSERT_EQ(d - a, 3);
  for (int line = a; line < d; ++line)
    EXPECT_GT(run_rounds_cum[line], run_rounds_cum[line + 1]) << "line " << line << "\n" << r.out;
}

// A source file that cannot be found: pprof's error, then the sampled lines' numbers.
TEST(ListMissingSource, SaysSoAndStillShowsTheNumbers) {
  TempDir empty;
  const RunResult r = run_tally_in({"list", "func_a", gperf_dir() + "/split.pb.gz"}, empty.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ROUTINE ======================== func_a in /tally/workloads/split.cc"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" Error: open /tally/workloads/split.cc: no such file or directory"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("source not found"), std::string::npos) << r.out;
  // split.pb.raw.txt: func_a's samples are 111 of 276, all on line 26.
  EXPECT_NE(r.out.find("     111ms      111ms     26:\n"), std::string::npos) << r.out;
}

TEST(ListErrors, NoMatchAndBadRegex) {
  RunResult r = run_tally({"list", "no_such_function", shared("fixtures/gperf/split.pb.gz")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no matches found for regexp: no_such_function"), std::string::npos) << r.err;
  r = run_tally({"list", "(", shared("fixtures/gperf/split.pb.gz")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("invalid regex"), std::string::npos) << r.err;
  r = run_tally({"list", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--source-path"), std::string::npos) << r.out;
}

// callgrind_annotate's annotated source of one file: per line the self cost and the sum
// of the "=> callee" costs below it.
struct AnnotatedLine {
  int64_t self = 0;
  int64_t calls = 0;
};
std::map<std::string, std::map<int, AnnotatedLine>> annotated_sources(const std::string& text) {
  std::map<std::string, std::map<int, AnnotatedLine>> files;
  std::map<int, AnnotatedLine>* current = nullptr;
  static const std::regex kFile(R"(^-- Auto-annotated source: .* \+ (.*)$)");
  static const std::regex kMarker(R"(^-- line (\d+) -+$)");
  static const std::regex kCost(R"(^ *([\d,]+|\.)(?: \( *[\d.]+%\))? {1,2}(=> )?.*$)");
  int line = 0;
  int last_source = 0;
  bool header_rule = false;  // the rule under the file's header line
  for (const std::string& l : text_lines(text)) {
    std::smatch m;
    if (std::regex_match(l, m, kFile)) {
      current = &files[fs::path(m[1].str()).filename()];
      line = 1;
      header_rule = true;
      continue;
    }
    if (current == nullptr) continue;
    if (l.starts_with("------")) {
      if (std::exchange(header_rule, false)) continue;
      current = nullptr;
      continue;
    }
    if (std::regex_match(l, m, kMarker)) {
      line = std::stoi(m[1]);
      continue;
    }
    if (l.empty() || l.starts_with("@") || l.starts_with("Ir")) continue;
    if (!std::regex_match(l, m, kCost)) continue;
    auto cost = [](std::string v) {
      v.erase(std::remove(v.begin(), v.end(), ','), v.end());
      return v == "." ? int64_t{0} : std::stoll(v);
    };
    if (m[2].matched) {
      (*current)[last_source].calls += cost(m[1]);
    } else {
      (*current)[line].self += cost(m[1]);
      last_source = line++;
    }
  }
  return files;
}

// tally list's per-line numbers per file: self (flat) summed over the functions, and each
// function's calls (cum - flat).
struct ListedLine {
  int64_t self = 0;
  std::vector<int64_t> calls;  // per function with calls on the line
};
std::map<std::string, std::map<int, ListedLine>> listed_sources(const std::string& text) {
  std::map<std::string, std::map<int, ListedLine>> files;
  static const std::regex kRoutine(R"(^ROUTINE =+ .* in (.*)$)");
  static const std::regex kLine(R"(^ +(\S+) +(\S+) +(\d+):.*$)");
  std::string file;
  for (const std::string& l : text_lines(text)) {
    std::smatch m;
    if (std::regex_match(l, m, kRoutine)) file = fs::path(m[1].str()).filename();
    else if (!file.empty() && std::regex_match(l, m, kLine)) {
      auto v = [](const std::string& s) { return s == "." ? int64_t{0} : std::stoll(s); };
      ListedLine& a = files[file][std::stoi(m[3])];
      a.self += v(m[1]);
      if (v(m[2]) != v(m[1])) a.calls.push_back(v(m[2]) - v(m[1]));
    }
  }
  return files;
}

// callgrind_annotate shows under a line the calls of one function only (the first that
// calls from there: its func_of_line); with recursion split by callgrind (descend and
// descend'2 on one line) tally's listing of that function must have the same calls.
TEST(ListVsCallgrindAnnotate, PerLineSelfAndCallCosts) {
  const std::string annotate = find_program("callgrind_annotate");
  TALLY_REQUIRE_PEER(annotate, "callgrind_annotate");
  // callgrind_annotate looks up "/tally/workloads/x.cc" as INCLUDE_DIR + that path.
  TempDir include;
  fs::create_directories(include.file("tally"));
  fs::copy(workloads(), include.file("tally/workloads"), fs::copy_options::recursive);
  for (const char* name : {"split.default", "shlib.default", "deep.default", "split.jumps"}) {
    SCOPED_TRACE(name);
    const std::string file = shared(std::string("fixtures/callgrind/callgrind.out.") + name);
    const RunResult want = run({annotate, "--auto=yes", "--include=" + include.path(), file});
    ASSERT_EQ(want.exit_code, 0) << want.err;
    const auto expected = annotated_sources(want.out);
    ASSERT_FALSE(expected.empty()) << want.out;
    const RunResult got = run_tally({"list", ".", "--source-path", workloads(), file});
    ASSERT_EQ(got.exit_code, 0) << got.err;
    const auto listed = listed_sources(got.out);
    for (const auto& [source, lines] : expected) {
      SCOPED_TRACE(source);
      ASSERT_TRUE(listed.count(source)) << got.out;
      int64_t self_total = 0, calls_total = 0;
      for (const auto& [line, cost] : lines) {
        const auto it = listed.at(source).find(line);
        const ListedLine have = it == listed.at(source).end() ? ListedLine{} : it->second;
        EXPECT_EQ(have.self, cost.self) << "line " << line;
        if (cost.calls == 0) {
          EXPECT_TRUE(have.calls.empty()) << "line " << line;
        } else {
          EXPECT_NE(std::find(have.calls.begin(), have.calls.end(), cost.calls), have.calls.end())
              << "line " << line << ": " << cost.calls;
        }
        self_total += cost.self;
        calls_total += cost.calls;
      }
      EXPECT_GT(self_total, 0);
      EXPECT_GT(calls_total, 0);  // every workload file makes calls
      // Nothing listed on lines the annotation has no cost for.
      for (const auto& [line, cost] : listed.at(source))
        if (!lines.count(line)) {
          EXPECT_EQ(cost.self, 0) << "line " << line;
          EXPECT_TRUE(cost.calls.empty()) << "line " << line;
        }
    }
  }
}

}  // namespace
}  // namespace tally::test
