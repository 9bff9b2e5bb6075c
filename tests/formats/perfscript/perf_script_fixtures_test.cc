// The `perf script` fixtures of ../shared/fixtures/perf against perf's own view of the same
// perf.data: `perf report --stdio --no-children --sort sym` (the *.perf-report.txt beside
// them). Each report line "  40.00%  [.] func_a" is the share of samples (all periods are
// equal) whose leaf is that symbol; the caller chain below it is the one path of all those
// samples. tally's leaf totals must give the same percentages to perf's two decimals, and
// the same caller chains, inline frames included.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "perf_script_view.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

struct ReportEntry {
  double percent = 0;
  std::string symbol;
  std::vector<std::string> callers;  // nearest first, " (inlined)" removed
};

// Parses perf report's --stdio --no-children output.
std::vector<ReportEntry> parse_report(const std::string& text) {
  std::vector<ReportEntry> entries;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t pct = line.find('%');
    size_t bracket = line.find("] ");
    if (pct != std::string::npos && bracket != std::string::npos && line.find('[') < bracket &&
        line.find("---") == std::string::npos) {
      ReportEntry e;
      e.percent = std::stod(line.substr(0, pct));
      e.symbol = line.substr(bracket + 2);
      while (!e.symbol.empty() && e.symbol.back() == ' ') e.symbol.pop_back();
      entries.push_back(e);
      continue;
    }
    size_t begin = line.find_first_not_of(" |-");
    if (entries.empty() || begin == std::string::npos) continue;
    std::string caller = line.substr(begin);
    if (caller.ends_with(" (inlined)")) caller.resize(caller.size() - 10);
    entries.back().callers.push_back(caller);
  }
  return entries;
}

class PerfScriptFixture : public testing::TestWithParam<std::string> {};

TEST_P(PerfScriptFixture, LeafSharesMatchPerfReport) {
  const std::string base = shared("fixtures/perf/" + GetParam());
  auto p = read_perf_script_file(base + ".perf-script.txt");
  ASSERT_TRUE(p) << p.error().message;
  auto report = parse_report(read_text(base + ".perf-report.txt"));
  ASSERT_GE(report.size(), 2u);

  const double total = static_cast<double>(p->total(0));
  auto totals = leaf_totals(*p, 0);
  double reported = 0;
  for (const ReportEntry& e : report) {
    SCOPED_TRACE(e.symbol);
    reported += e.percent;
    ASSERT_TRUE(totals.count(e.symbol)) << "no samples with leaf " << e.symbol;
    EXPECT_NEAR(100.0 * static_cast<double>(totals[e.symbol]) / total, e.percent, 0.0051);
    // cpu-clock values are the period (1 ms here) per sample.
    EXPECT_EQ(totals[e.symbol] * 1000000, leaf_totals(*p, 1)[e.symbol]);
  }
  EXPECT_NEAR(reported, 100.0, 0.03);  // perf reports every leaf: nothing left over
}

TEST_P(PerfScriptFixture, CallerChainsMatchPerfReport) {
  const std::string base = shared("fixtures/perf/" + GetParam());
  auto p = read_perf_script_file(base + ".perf-script.txt");
  ASSERT_TRUE(p) << p.error().message;
  size_t chains = 0;
  for (const ReportEntry& e : parse_report(read_text(base + ".perf-report.txt"))) {
    if (e.callers.empty()) continue;  // perf prints no chain for its tiny entries
    ++chains;
    SCOPED_TRACE(e.symbol);
    size_t checked = 0;
    for (size_t i = 0; i < p->sample_count(); ++i) {
      auto frames = frame_names(*p, i);
      if (frames.empty() || frames[0] != e.symbol) continue;
      EXPECT_EQ(std::vector<std::string>(frames.begin() + 1, frames.end()), e.callers);
      ++checked;
    }
    EXPECT_GT(checked, 0u);
  }
  EXPECT_GE(chains, 2u);
}

// The report parser itself, on what perf printed for deep-fp: deep_leaf's chain is 126
// "descend" lines (perf cut the 127-frame stacks), shallow_leaf's 9 descend, run_rounds,
// main, __libc_start_call_main (awk '/deep_leaf/,/shallow_leaf/' | grep -c descend).
TEST(PerfScriptFixtures, ReportParser) {
  auto report = parse_report(read_text(shared("fixtures/perf/deep-fp.perf-report.txt")));
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0].symbol, "deep_leaf");
  EXPECT_DOUBLE_EQ(report[0].percent, 74.89);
  EXPECT_EQ(report[0].callers, std::vector<std::string>(126, "descend"));
  std::vector<std::string> shallow(9, "descend");
  shallow.insert(shallow.end(), {"run_rounds", "main", "__libc_start_call_main"});
  EXPECT_EQ(report[1].callers, shallow);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PerfScriptFixture,
                         testing::Values("split-fp", "split-nofp-dwarf", "deep-fp", "shlib-fp"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// Counted with awk over the files (leaf symbol of each blank-line separated sample, offset
// removed): split-fp 274/204/134/72 + 1 do_lookup_x = 685; split-nofp-dwarf 136/103/70/35
// + 1 = 345.
TEST(PerfScriptFixtures, SplitTotals) {
  auto fp = read_perf_script_file(shared("fixtures/perf/split-fp.perf-script.txt"));
  ASSERT_TRUE(fp) << fp.error().message;
  EXPECT_EQ(leaf_totals(*fp, 0),
            (std::map<std::string, int64_t>{{"func_a", 274}, {"func_b", 204}, {"func_c", 134},
                                            {"func_d", 72}, {"do_lookup_x", 1}}));
  EXPECT_EQ(fp->period, 1000000);
  EXPECT_EQ(fp->duration_nanos, 687000000);  // 982.455286 - 981.768286
  auto dwarf = read_perf_script_file(shared("fixtures/perf/split-nofp-dwarf.perf-script.txt"));
  ASSERT_TRUE(dwarf) << dwarf.error().message;
  EXPECT_EQ(leaf_totals(*dwarf, 0),
            (std::map<std::string, int64_t>{{"func_a", 136}, {"func_b", 103}, {"func_c", 70},
                                            {"func_d", 35}, {"do_lookup_x", 1}}));
}

// --call-graph dwarf prints inlined frames "(inlined)" at the address of the frame they are
// inlined into; they become one location with several lines, innermost first. The first
// sample of split-nofp-dwarf.perf-script.txt (lines 2-12):
//   e460 resolve_map (inlined), elf_machine_rela (inlined), elf_dynamic_do_Rela (inlined),
//   e460 _dl_relocate_object (ld-linux-x86-64.so.2)
//   1bccb _dl_start_final (inlined), 1bccb _dl_start (ld-linux-x86-64.so.2)
TEST(PerfScriptFixtures, DwarfInlineChainsBecomeOneLocation) {
  auto p = read_perf_script_file(shared("fixtures/perf/split-nofp-dwarf.perf-script.txt"));
  ASSERT_TRUE(p) << p.error().message;
  auto stack = p->stack(0);
  ASSERT_EQ(stack.size(), 7u);  // 11 frame lines, 4 of them inlined into the next
  const core::Location& relocate = p->location(stack[2]);
  EXPECT_EQ(relocate.address, 0xe460u);
  ASSERT_EQ(relocate.lines.size(), 4u);
  std::vector<std::string> chain;
  for (const core::Line& l : relocate.lines) chain.emplace_back(p->str(p->function(l.function).name));
  EXPECT_EQ(chain, (std::vector<std::string>{"resolve_map", "elf_machine_rela",
                                             "elf_dynamic_do_Rela", "_dl_relocate_object"}));
  const core::Mapping& ld = p->mapping(relocate.mapping);
  EXPECT_EQ(p->str(ld.file), "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  EXPECT_TRUE(ld.has_inline_frames);
  EXPECT_EQ(p->location(stack[5]).lines.size(), 2u);  // _dl_start_final in _dl_start

  // "27304 __libc_start_main_impl+0x84 (inlined)" is followed by "1590 _start": no real
  // frame at its address, so it stands alone, outside any mapping, as perf report shows it.
  const auto funcs = frame_names(*p, 1);
  EXPECT_EQ(funcs, (std::vector<std::string>{"func_a", "run_rounds", "main",
                                             "__libc_start_call_main", "__libc_start_main_impl",
                                             "_start"}));
  const core::Location& impl = p->location(p->stack(1)[4]);
  EXPECT_EQ(impl.address, 0x27304u);
  EXPECT_EQ(impl.mapping, 0u);
  // The exe has no inlined frames of its own.
  EXPECT_FALSE(p->mapping(p->location(p->stack(1)[0]).mapping).has_inline_frames);
}

}  // namespace
}  // namespace tally::test
