// Malformed `perf script` text: clear "FILE: line N: ..." errors, never a crash. Files cut
// at a line end are complete samples; files cut inside a line (a truncated download, a
// full disk) must fail at that line, because perf prints the same fields on every sample
// of an event and a cut line lacks some of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "perf_script_view.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

std::string error_of(std::string_view text) {
  core::Diagnostics diagnostics;
  auto p = read_perf_script_text(text, diagnostics, "in.txt");
  if (p) return "(read without error)";
  return p.error().message;
}

TEST(PerfScriptErrors, ClearMessagesWithLineNumbers) {
  EXPECT_EQ(error_of(""), "in.txt: line 1: no samples: expected sample header lines 'COMM "
                          "PID[/TID] [CPU] TIME: [PERIOD] EVENT:' (is this `perf script` output?)");
  EXPECT_EQ(error_of("# just a header\n#\n").substr(0, 30), "in.txt: line 2: no samples: ex");
  EXPECT_EQ(error_of("hello world\n"),
            "in.txt: line 1: expected a sample header 'COMM PID[/TID] [CPU] TIME: [PERIOD] "
            "EVENT:', a tab-indented frame 'ADDRESS SYMBOL (DSO)', a '#' comment or a blank "
            "line; found 'hello world'");
  EXPECT_EQ(error_of("#\n\t10 f (/p)\n"),
            "in.txt: line 2: frame line outside a sample: expected a sample header 'COMM "
            "PID[/TID] [CPU] TIME: [PERIOD] EVENT:' before it");
  EXPECT_EQ(error_of("p 1 1.0: 1 ev:\n\tmain (/p)\n"),
            "in.txt: line 2: expected a frame 'ADDRESS SYMBOL (DSO)' with a hexadecimal "
            "address, found 'main (/p)'");
  EXPECT_EQ(error_of("p 1 1.0: 1 ev:\n\t10 f (/p)\n\t20 g\n"),
            "in.txt: line 3: frame '20 g' has the fields 'ADDRESS SYMBOL', but the frame on "
            "line 2 has 'ADDRESS SYMBOL (DSO)' (is the line cut short?)");
  EXPECT_EQ(error_of("p 1 1.0: 1 ev:\n\t10 f (/p)\n\np 1 2.0: ev:\n"),
            "in.txt: line 4: sample header has the fields 'COMM TID TIME: EVENT:', but the 'ev' "
            "sample on line 1 has 'COMM TID TIME: PERIOD EVENT:' (is the line cut short?)");
  EXPECT_EQ(error_of("p 1 1.0: 1 ev:\n\t10 f (/p)\n\np 1 2.0: 1\n"),
            "in.txt: line 4: sample header 'p 1 2.0: 1' names no event, but the first sample's "
            "header does (is the line cut short?)");
  EXPECT_EQ(error_of("p 1 1.0: 1 ev:\n\t10 f (/p)\n\np 1 2"),
            "in.txt: line 4: expected a sample header 'COMM PID[/TID] [CPU] TIME: [PERIOD] "
            "EVENT:', a tab-indented frame 'ADDRESS SYMBOL (DSO)', a '#' comment or a blank "
            "line; found 'p 1 2'");
}

TEST(PerfScriptErrors, FileEndingInsideASampleHeader) {
  // "task-clock:ppp:" cut to "task-clock:" still looks like a header: only the missing
  // newline tells.
  EXPECT_EQ(error_of("p 1 1.0: 1 task-clock:ppp:\n\t10 f (/p)\n\np 1 2.0: 1 task-clock:"),
            "in.txt: line 4: the file ends inside this sample header (no newline and no frames "
            "after it; is the file truncated?)");
  // With its newline it is a sample without frames.
  EXPECT_EQ(error_of("p 1 1.0: 1 ev:\n\t10 f (/p)\n\np 1 2.0: 1 ev:\n"), "(read without error)");
}

TEST(PerfScriptErrors, QuotedLinesAreShortAndPrintable) {
  const std::string message = error_of(std::string(500, 'x') + "\x01\n");
  EXPECT_EQ(message, "in.txt: line 1: expected a sample header 'COMM PID[/TID] [CPU] TIME: "
                     "[PERIOD] EVENT:', a tab-indented frame 'ADDRESS SYMBOL (DSO)', a '#' "
                     "comment or a blank line; found '" + std::string(80, 'x') + "...'");
  EXPECT_EQ(error_of("p 1 1.0: 1 ev:\n\t\x02\x03 f (/p)\n"),
            "in.txt: line 2: expected a frame 'ADDRESS SYMBOL (DSO)' with a hexadecimal "
            "address, found '?? f (/p)'");
}

// Every line after the first sample of each file, cut anywhere after its first visible
// character and before its end (a frame line: before its last visible character), fails
// with an error at that line. Cutting after a newline leaves whole samples, which read.
class PerfScriptCut : public testing::TestWithParam<std::string> {};

TEST_P(PerfScriptCut, CutInsideALineFailsAtThatLine) {
  const std::string text = read_text(shared(GetParam()));
  // The lines of the first 12 samples, with their offsets.
  size_t begin = 0, blank_lines = 0;
  uint64_t line_number = 0;
  size_t cuts = 0;
  bool first_sample_done = false;
  while (begin < text.size() && blank_lines < 12) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    ++line_number;
    const std::string_view line(text.data() + begin, end - begin);
    const size_t visible = line.find_first_not_of(" \t");
    const bool blank = visible == std::string_view::npos;
    if (blank) {
      ++blank_lines;
      first_sample_done = true;
    } else if (first_sample_done && line[0] != '#') {
      // A frame may lose only what follows its ')'; a header line (which perf always ends
      // with a newline) nothing at all.
      const bool header = line[0] != '\t';
      const size_t stop = header ? end + 1 : begin + line.find_last_not_of(" \t");
      for (size_t cut = begin + visible + 1; cut < stop; ++cut) {
        const std::string message = error_of(std::string_view(text.data(), cut));
        const std::string expected = "in.txt: line " + std::to_string(line_number) + ": ";
        ASSERT_EQ(message.substr(0, expected.size()), expected)
            << "cut at byte " << cut << " of line " << line_number << " '" << line
            << "': " << message;
        ++cuts;
      }
      // Cut after the newline: complete, reads.
      EXPECT_EQ(error_of(std::string_view(text.data(), std::min(end + 1, text.size()))),
                "(read without error)")
          << "cut after line " << line_number;
    }
    begin = end + 1;
  }
  EXPECT_GT(cuts, 200u);
}

INSTANTIATE_TEST_SUITE_P(
    Files, PerfScriptCut,
    testing::Values("fixtures/perf/split-fp.perf-script.txt",
                    "fixtures/perf/split-nofp-dwarf.perf-script.txt",
                    "conformance/perf-script/speedscope/forks.linux-perf.txt",
                    "conformance/perf-script/speedscope/simple-with-pid.linux-perf.txt",
                    "conformance/perf-script/speedscope/rust-mangled.linux-perf.txt",
                    "conformance/perf-script/speedscope/simple-with-header.linux-perf.txt"),
    [](const auto& param_info) {
      std::string name = param_info.param.substr(param_info.param.rfind('/') + 1);
      name = name.substr(0, name.find('.'));
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

// A file cut after the k-th sample (at its blank line) holds exactly k samples.
TEST(PerfScriptErrors, CutBetweenSamplesKeepsTheWholeSamples) {
  const std::string text = read_text(shared("fixtures/perf/split-fp.perf-script.txt"));
  size_t pos = 0;
  for (int64_t k = 1; k <= 50; ++k) {
    pos = text.find("\n\n", pos) + 1;
    core::Diagnostics diagnostics;
    auto p = read_perf_script_text(std::string_view(text.data(), pos), diagnostics);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(p->total(0), k);
  }
}

// Random bytes and random mixes of perf script fragments: an error or a profile whose ids
// are all valid, never a crash (the sanitizer build and fuzz_perfscript go further).
TEST(PerfScriptErrors, GarbageNeverCrashes) {
  const std::vector<std::string> pieces = {
      "split 13067   981.768286:    1000000 cpu-clock: ", "\t1674 func_a+0x24 (/bin/split)",
      "\te460 resolve_map+0x840 (inlined)", "", "#", "# captured on: Wed Aug 15 16:01:24 2018",
      "  split.cc:26", "x 1 [003] 1.5: ev:", "\t0 [unknown] ([unknown])", "(((", ")",
      "\tffffffffffffffffff", "a 99999999999999999999/1 1.0: 1 e:", "p 1 1.0: 1 ev: 12 f (/p)"};
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int lines = static_cast<int>(rng() % 12);
    for (int i = 0; i < lines; ++i) {
      if (rng() % 5 == 0) {
        for (int b = static_cast<int>(rng() % 20); b > 0; --b) text += static_cast<char>(rng());
      } else {
        text += pieces[rng() % pieces.size()];
      }
      text += '\n';
    }
    core::Diagnostics diagnostics;
    auto p = read_perf_script_text(text, diagnostics, "g.txt");
    if (!p) {
      EXPECT_EQ(p.error().message.rfind("g.txt: line ", 0), 0u) << p.error().message;
      continue;
    }
    for (size_t i = 0; i < p->sample_count(); ++i) {
      ASSERT_EQ(p->values(i).size(), p->sample_types.size());
      for (core::LocationId id : p->stack(i)) {
        ASSERT_TRUE(id >= 1 && id <= p->locations.size());
        const core::Location& l = p->location(id);
        ASSERT_LE(l.mapping, p->mappings.size());
        for (const core::Line& line : l.lines)
          ASSERT_TRUE(line.function >= 1 && line.function <= p->functions.size());
      }
    }
  }
}

}  // namespace
}  // namespace tally::test
