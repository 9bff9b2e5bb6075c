// Peer test: a stack profile written as callgrind by tally (call_graph_from_stacks, pprof's
// rule) against `pprof -callgrind ../bin/EXE NAME.prof` (NAME.pprof-callgrind.txt), both
// read by callgrind_annotate.
//
// The input is NAME.pb.gz: `pprof -proto` of the same .prof, i.e. the symbolized profile
// pprof's callgrind report was made from (-callgrind and -proto both use address
// granularity with inline frames, so pprof graphs exactly the proto's samples). pprof then
// shows one sample type, the default (last) one, cpu, in its output unit, ms.
//
// tally differs from pprof's file on purpose in these ways, which the comparison undoes on
// tally's side (pprof_writes_it) and the other tests check:
//  - calls=: pprof writes "calls=0" on every edge ("pprof doesn't have a flat weight for a
//    call"); callgrind_annotate reads a call count of 0 as no call and adds the inclusive
//    cost that follows to the caller's SELF cost (main shows 276 self, the program total
//    becomes 1,656 for 276 samples). tally writes the number of samples through the edge,
//    so self costs and totals read right.
//  - totals: tally ends the part with "totals:" (the spec's sum of self costs); pprof has
//    none, so callgrind_annotate sums its (inflated) function costs instead.
//  - file names: pprof cleans them for display (Go's filepath.Clean:
//    "./csu/../csu/libc-start.c" -> "csu/libc-start.c"); tally keeps the recorded name,
//    as valgrind does, since a conversion does not rewrite data (and ".." is not lexical
//    when a directory is a symlink). The comparison input gets cleaned names.
//  - unknown files: tally writes valgrind's "???" (callgrind_annotate reads an empty cfi=
//    as "the caller's file" and books the call's cost to the wrong function); pprof writes
//    an empty name.
//  - code without symbols: pprof writes an empty fn= (and fl=), so all such code of an
//    object is one nameless function; tally's writer names it by its address as valgrind
//    does ("fn=0x00007f2659ed44a2"). The comparison input gives it pprof's empty name.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "callgrind_peer_helpers.h"
#include "callgrind_test_helpers.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/pprof/pprof.h"

namespace tally::callgrind::test {
namespace {

namespace fs = std::filesystem;

std::string gperf_dir() { return tally::test::shared("fixtures/gperf"); }

std::vector<std::string> fixtures_with_pprof_callgrind() {
  std::vector<std::string> out;
  for (const auto& f : tally::test::gperf_fixtures())
    if (fs::exists(gperf_dir() + "/" + f.name + ".pprof-callgrind.txt")) out.push_back(f.name);
  return out;
}

core::Profile read_pprof_fixture(const std::string& name) {
  const std::string path = gperf_dir() + "/" + name + ".pb.gz";
  core::Diagnostics diagnostics;
  auto p = pprof::read_profile(tally::test::read_bytes(path), path, diagnostics);
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(p).value();
}

// The profile as pprof's callgrind report sees it: only the cpu sample type, in ms. Every
// sample is whole periods of 1 or 10 ms, so the division is exact (asserted) and summing
// before or after it, as pprof does, gives the same numbers.
core::Profile cpu_in_ms(const core::Profile& in) {
  const int cpu = in.sample_type_index("cpu");
  if (cpu < 0 || in.str(in.sample_types[static_cast<size_t>(cpu)].unit) != "nanoseconds")
    throw std::runtime_error("no cpu/nanoseconds sample type");
  core::Profile out = in;
  out.clear_samples();
  out.sample_types = {out.value_type("cpu", "ms")};
  out.default_sample_type = out.intern("cpu");
  for (size_t i = 0; i < in.sample_count(); ++i) {
    const int64_t ns = in.values(i)[static_cast<size_t>(cpu)];
    if (ns % 1'000'000 != 0) throw std::runtime_error("a cpu value is not whole ms");
    const int64_t ms = ns / 1'000'000;
    out.add_sample(in.stack(i), std::span(&ms, 1), in.labels(i));
  }
  return out;
}

// pprof's display names: every function's file cleaned lexically (see the top comment).
core::Profile with_clean_file_names(core::Profile p) {
  for (core::Function& f : p.functions) {
    const std::string_view file = p.str(f.filename);
    if (!file.empty()) f.filename = p.intern(fs::path(file).lexically_normal().string());
  }
  return p;
}

// pprof's node for a location without lines: a function with no name and no file.
core::Profile with_unsymbolized_unnamed(core::Profile p) {
  core::FunctionId unnamed = 0;
  for (core::Location& l : p.locations) {
    if (!l.lines.empty()) continue;
    if (unnamed == 0) unnamed = p.add_function({p.intern(""), p.intern(""), p.intern(""), 0});
    l.lines.push_back({unnamed, 0, 0});
  }
  return p;
}

// callgrind_annotate reads an empty cfi=/cfl= as "the caller's file", so a callee in a
// file with no name gets its caller's file; valgrind's "???" for an unknown file avoids it.
core::Profile with_unknown_files_named(core::Profile p) {
  for (core::Function& f : p.functions)
    if (p.str(f.filename).empty()) f.filename = p.intern("???");
  return p;
}

std::string write_text(const core::Profile& p) {
  core::Diagnostics diagnostics;
  auto text = write_callgrind(p, WriteOptions{}, diagnostics);
  if (!text) throw std::runtime_error(text.error().message);
  return *text;
}

// tally's file with pprof's writing choices (see the top comment): every call count 0, no
// totals: line, and an unknown file spelled "" rather than valgrind's "???".
std::string pprof_writes_it(const std::string& tally_text) {
  static const std::regex kCalls(R"((^|\n)calls=[0-9]+ )");
  static const std::regex kTotals(R"((^|\n)totals:[^\n]*)");
  static const std::regex kUnknownFile(R"((\n(?:fl|fi|fe|cfi|cfl|jfi)=(?:\([0-9]+\) ?)?)\?\?\?\n)");
  const std::string zeroed = std::regex_replace(tally_text, kCalls, "$1calls=0 ");
  const std::string unnamed = std::regex_replace(zeroed, kUnknownFile, "$1\n");
  return std::regex_replace(unnamed, kTotals, "$1");
}

// "func_a" -> flat (or cum) value in ms, from `pprof -top` (NAME.pprof-top.txt); functions
// with a zero value are left out.
std::map<std::string, int64_t> pprof_top_column(const std::string& name, bool cum) {
  static const std::regex kRow(R"(^\s*([0-9.]+)(ms|s)?\s+\S+%\s+\S+%\s+([0-9.]+)(ms|s)?\s+\S+%\s+(.+)$)");
  std::map<std::string, int64_t> out;
  std::istringstream in(tally::test::read_text(gperf_dir() + "/" + name + ".pprof-top.txt"));
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, kRow)) continue;
    const std::string number = cum ? m[3].str() : m[1].str();
    const std::string unit = cum ? m[4].str() : m[2].str();
    const double value = std::stod(number) * (unit == "s" ? 1000.0 : 1.0);
    if (value != 0) out[m[5].str()] = static_cast<int64_t>(std::llround(value));
  }
  return out;
}

// "func_a" -> cost, from callgrind_annotate's function table ("111 (40.22%)  FILE:FN [OBJ]");
// zero rows left out.
std::map<std::string, int64_t> annotate_column(const std::string& output) {
  static const std::regex kRow(R"(^\s*([0-9,]+) \(\s*[0-9.]+%\)\s+([^:\s]*):(.*?)(?: \[[^\]]*\])?$)");
  std::map<std::string, int64_t> out;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, kRow)) continue;
    std::string digits = m[1].str();
    std::erase(digits, ',');
    const int64_t value = std::stoll(digits);
    if (value != 0) out[m[3].str()] += value;
  }
  return out;
}

int64_t program_total(const std::string& output) {
  static const std::regex kTotal(R"(\n\s*([0-9,]+) \(100.0%\)  PROGRAM TOTALS)");
  std::smatch m;
  if (!std::regex_search(output, m, kTotal)) return -1;
  std::string digits = m[1].str();
  std::erase(digits, ',');
  return std::stoll(digits);
}

class CallgrindPprofPeer : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string annotate_path = callgrind_annotate_path();
    TALLY_REQUIRE_PEER(annotate_path, "callgrind_annotate");
    name_ = GetParam();
    pprof_file_ = temp_.file(name_ + ".pprof-callgrind.txt");
    fs::copy_file(gperf_dir() + "/" + name_ + ".pprof-callgrind.txt", pprof_file_);
    input_ = cpu_in_ms(read_pprof_fixture(name_));
  }

  std::string save(const std::string& file, const std::string& text) const {
    const std::string path = temp_.file(file);
    tally::test::write_bytes(path, text);
    return path;
  }

  // callgrind_annotate's view; both files are in the temp dir and annotated from there.
  std::string view(const std::string& file, const std::vector<std::string>& options) const {
    return without_file_name(annotate(file, options, temp_.path()), /*whole_line=*/true);
  }

  std::string name_, pprof_file_;
  core::Profile input_;
  tally::test::TempDir temp_;
};

// tally's graph, written with pprof's writing choices, prints exactly pprof's tables: the
// same nodes, edges and costs (each edge cost shows, as pprof's file makes
// callgrind_annotate show it, in its caller's self cost).
TEST_P(CallgrindPprofPeer, SameTablesAsPprofCallgrind) {
  const std::string tally_file =
      save(name_ + ".tally-as-pprof", pprof_writes_it(write_text(with_clean_file_names(with_unsymbolized_unnamed(input_)))));
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{}, std::vector<std::string>{"--inclusive=yes"}}) {
    const std::string expected = view(pprof_file_, options);
    ASSERT_NE(expected.find("Events recorded:  cpu(ms)"), std::string::npos) << expected;
    EXPECT_EQ(view(tally_file, options), expected)
        << "callgrind_annotate options:" << (options.empty() ? "" : " " + options[0]);
  }
}

// tally's own file (call counts, totals:): callgrind_annotate's self costs are pprof -top's
// flat column and the program total is pprof's total, where pprof's file inflates both.
TEST_P(CallgrindPprofPeer, TallyCallCountsGiveTrueSelfCosts) {
  const std::string tally_file = save(name_ + ".tally", write_text(input_));
  const std::string tally_view = view(tally_file, {"--threshold=100"});
  const auto flat = pprof_top_column(name_, /*cum=*/false);
  ASSERT_FALSE(flat.empty());
  EXPECT_EQ(annotate_column(tally_view), flat);
  int64_t total = 0;
  for (const auto& [fn, v] : flat) total += v;
  EXPECT_EQ(program_total(tally_view), total);
  EXPECT_GT(program_total(view(pprof_file_, {})), total)
      << "pprof's calls=0 no longer inflates callgrind_annotate's totals; revisit the note";
}

// With --inclusive=yes callgrind_annotate gives each called function the sum of its
// incoming edges: pprof -top's cum column wherever no function calls itself from another
// position (each stack then enters the function once). Code without symbols is named
// differently by the two ("0x7f26..." and "[libstdc++.so.6.0.30]") and left out.
TEST_P(CallgrindPprofPeer, InclusiveCostsAreCumulative) {
  const std::string tally_file = save(name_ + ".tally", write_text(with_unknown_files_named(input_)));
  const std::string tally_view = view(tally_file, {"--inclusive=yes", "--threshold=100"});
  auto named = [](std::map<std::string, int64_t> column) {
    std::erase_if(column, [](const auto& row) { return row.first.starts_with("0x") ||
                                                       row.first.starts_with("["); });
    return column;
  };
  auto expected = named(pprof_top_column(name_, /*cum=*/true));
  if (name_ == "deep") {
    // Every stack is run_rounds > descend x N > leaf: the descend frames above the last
    // one are at the recursive call site, the last at the leaf's call site, so each
    // sample crosses one descend -> descend edge between two positions, counted once
    // however deep (pprof's seenEdge): descend's incoming edges add up to cum + total,
    // 2 x 230 here, as pprof's own file gives it. Counting every repeated pair would
    // give about 200 x.
    ASSERT_EQ(expected.count("descend"), 1u);
    expected["descend"] += expected.at("main");
  }
  EXPECT_EQ(named(annotate_column(tally_view)), expected);
}

// tally keeps recorded file names; pprof's file has them cleaned.
TEST_P(CallgrindPprofPeer, FileNamesAreKeptAsRecorded) {
  const std::string text = write_text(input_);
  for (const core::Function& f : input_.functions) {
    const std::string file(input_.str(f.filename));
    if (file.empty()) continue;
    EXPECT_NE(text.find(") " + file + "\n"), std::string::npos) << file;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CallgrindPprofPeer,
                         ::testing::ValuesIn(fixtures_with_pprof_callgrind()),
                         [](const auto& param_info) { return test_name(param_info.param); });

}  // namespace
}  // namespace tally::callgrind::test
