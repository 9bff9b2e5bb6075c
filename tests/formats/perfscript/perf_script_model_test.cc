// How `perf script` text maps onto core::Profile, on small inputs written here by hand so
// that every expected number can be checked by reading the input.
#include <gtest/gtest.h>

#include "perf_script_view.h"

namespace tally::test {
namespace {

using Names = std::vector<std::string>;

core::Profile read_ok(std::string_view text, core::Diagnostics* diagnostics = nullptr) {
  core::Diagnostics local;
  auto p = read_perf_script_text(text, diagnostics ? *diagnostics : local);
  if (!p) ADD_FAILURE() << p.error().message;
  return p ? std::move(*p) : core::Profile{};
}

std::vector<int64_t> values(const core::Profile& p, size_t sample) {
  auto v = p.values(sample);
  return {v.begin(), v.end()};
}

TEST(PerfScriptModel, EventsInOrderOfFirstAppearance) {
  const char* text =
      "prog 1 1.000000: 100 cycles:u:\n\t10 f (/bin/prog)\n\n"
      "prog 1 1.001000: 1000 cpu-clock:\n\t10 f (/bin/prog)\n\n"
      "prog 1 1.002000: 300 cycles:u:\n\t20 g (/bin/prog)\n\n"
      "prog 1 1.004000: 1000 cpu-clock:\n\t20 g (/bin/prog)\n";
  core::Profile p = read_ok(text);
  EXPECT_EQ(sample_type_names(p),
            (Names{"samples/count", "cycles:u/count", "cpu-clock/nanoseconds"}));
  // cycles:u is first: the period type, but its periods differ (100, 300), so no period.
  EXPECT_EQ(p.str(p.period_type.type), "cycles:u");
  EXPECT_EQ(p.period, 0);
  EXPECT_EQ(p.str(p.default_sample_type), "cycles:u");
  // Same stack and labels: the two events of each stack merge into one sample.
  ASSERT_EQ(p.sample_count(), 2u);
  EXPECT_EQ(values(p, 0), (std::vector<int64_t>{2, 100, 1000}));
  EXPECT_EQ(values(p, 1), (std::vector<int64_t>{2, 300, 1000}));
  EXPECT_EQ(p.duration_nanos, 4000000);  // 1.004 - 1.000 s
}

TEST(PerfScriptModel, ConstantPeriodOfTheFirstEventIsThePeriod) {
  const char* text =
      "a 5 2.5: 250000 task-clock:\n\t1 x (/x)\n\n"
      "a 5 2.6: 250000 task-clock:\n\t2 y (/x)\n\n"
      "a 5 2.7: 7 page-faults:\n\t2 y (/x)\n";
  core::Profile p = read_ok(text);
  EXPECT_EQ(sample_type_names(p),
            (Names{"samples/count", "task-clock/nanoseconds", "page-faults/count"}));
  EXPECT_EQ(p.period, 250000);
  EXPECT_EQ(p.str(p.period_type.unit), "nanoseconds");
}

TEST(PerfScriptModel, MergingKeepsTheOrderOfFirstAppearance) {
  const char* text =
      "p 1 1.0: 1 ev:\n\t1 A (/p)\n\n"
      "p 1 1.1: 1 ev:\n\t2 B (/p)\n\n"
      "p 1 1.2: 1 ev:\n\t1 A (/p)\n\n"
      "p 1 1.3: 1 ev:\n\t3 C (/p)\n\n"
      "p 2 1.4: 1 ev:\n\t1 A (/p)\n\n"  // another thread: not merged with A of tid 1
      "p 1 1.5: 1 ev:\n\t2 B (/p)\n";
  core::Profile p = read_ok(text);
  ASSERT_EQ(p.sample_count(), 4u);
  EXPECT_EQ(leaf_name(p, 0), "A");
  EXPECT_EQ(p.values(0)[0], 2);
  EXPECT_EQ(leaf_name(p, 1), "B");
  EXPECT_EQ(p.values(1)[0], 2);
  EXPECT_EQ(leaf_name(p, 2), "C");
  EXPECT_EQ(leaf_name(p, 3), "A");
  EXPECT_EQ(num_label(p, 3, "tid"), 2);
  // One location per (DSO, address): A's location is shared by samples 0 and 3.
  EXPECT_EQ(p.stack(0)[0], p.stack(3)[0]);
  EXPECT_EQ(p.locations.size(), 3u);
}

TEST(PerfScriptModel, SameAddressInAnotherDsoIsAnotherLocation) {
  const char* text = "p 1 1.0: 1 ev:\n\t10 f (/a.so)\n\t10 g (/b.so)\n\t10 [unknown] ([unknown])\n";
  core::Profile p = read_ok(text);
  ASSERT_EQ(p.sample_count(), 1u);
  auto stack = p.stack(0);
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_NE(stack[0], stack[1]);
  EXPECT_EQ(p.str(p.mapping(p.location(stack[0]).mapping).file), "/a.so");
  EXPECT_EQ(p.str(p.mapping(p.location(stack[1]).mapping).file), "/b.so");
  EXPECT_EQ(p.location(stack[2]).mapping, 0u);  // "[unknown]" is no mapping
  EXPECT_EQ(p.mappings.size(), 2u);
}

TEST(PerfScriptModel, ItaniumNamesAreDemangled) {
  const char* text =
      "p 1 1.0: 1 ev:\n"
      "\t10 _ZN3foo3barEv+0x4 (/p)\n"
      "\t20 _ZL10run_roundsm+0x3b (/p)\n"
      "\t30 _Znot_a_valid_name (/p)\n"
      "\t40 plain_c (/p)\n";
  core::Profile p = read_ok(text);
  EXPECT_EQ(frame_names(p, 0), (Names{"foo::bar()", "run_rounds(unsigned long)",
                                      "_Znot_a_valid_name", "plain_c"}));
  EXPECT_EQ(frame_system_names(p, 0),
            (Names{"_ZN3foo3barEv", "_ZL10run_roundsm", "_Znot_a_valid_name", "plain_c"}));
}

TEST(PerfScriptModel, UnknownSymbolsGiveLocationsWithoutLines) {
  const char* text = "p 1 1.0: 1 ev:\n\tffffffff81000000 [unknown] ([kernel.kallsyms])\n";
  core::Profile p = read_ok(text);
  const core::Location& l = p.location(p.stack(0)[0]);
  EXPECT_TRUE(l.lines.empty());
  EXPECT_EQ(l.address, 0xffffffff81000000u);
  EXPECT_FALSE(p.mapping(l.mapping).has_functions);
  EXPECT_TRUE(p.functions.empty());
}

TEST(PerfScriptModel, SourceLinesFromSrcline) {
  // perf script -F +srcline (perf 6.1 output).
  const char* text =
      "split 10602  4619.907778:    1001001  cpu-clock: \n"
      "\t            1674 func_a+0x24 (/bin/split)\n"
      "  split.cc:26\n"
      "\t            153c main+0x3dc (/bin/split)\n"
      "  ??:0\n";
  core::Profile p = read_ok(text);
  auto stack = p.stack(0);
  ASSERT_EQ(stack.size(), 2u);
  const core::Line& a = p.location(stack[0]).lines.at(0);
  EXPECT_EQ(a.line, 26);
  EXPECT_EQ(p.str(p.function(a.function).filename), "split.cc");
  const core::Line& m = p.location(stack[1]).lines.at(0);
  EXPECT_EQ(m.line, 0);
  EXPECT_EQ(p.str(p.function(m.function).filename), "");
  const core::Mapping& map = p.mapping(p.location(stack[0]).mapping);
  EXPECT_TRUE(map.has_filenames);
  EXPECT_TRUE(map.has_line_numbers);
  EXPECT_FALSE(map.has_inline_frames);
}

TEST(PerfScriptModel, OneLineSamplesWithoutCallChains) {
  // perf record without -g, then perf script (perf 6.1): no blank lines between samples.
  const char* text =
      "           split 10562  4615.983828:    1001001 cpu-clock:      7f18eb5f49b4 "
      "_dl_lookup_symbol_x+0x44 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
      "           split 10562  4615.984826:    1001001 cpu-clock:      5561621cc674 func_a+0x24 "
      "(/bin/split)\n"
      "           split 10562  4615.985826:    1001001 cpu-clock:      5561621cc674 func_a+0x24 "
      "(/bin/split)\n";
  core::Profile p = read_ok(text);
  ASSERT_EQ(p.sample_count(), 2u);
  EXPECT_EQ(frame_names(p, 0), (Names{"_dl_lookup_symbol_x"}));
  EXPECT_EQ(frame_names(p, 1), (Names{"func_a"}));
  EXPECT_EQ(p.values(1)[0], 2);
  EXPECT_EQ(p.location(p.stack(1)[0]).address, 0x5561621cc674u);
  EXPECT_EQ(str_label(p, 1, "comm"), "split");
}

TEST(PerfScriptModel, SideBandLinesAreSkippedWithAWarning) {
  const char* text =
      "perf-exec     0     0.000000: PERF_RECORD_COMM: perf-exec:10602/10602\n"
      "split 10602  4619.906794: PERF_RECORD_MMAP2 10602/10602: [0x5565a46f6000(0x1000) @ "
      "0x1000 fe:00 5308465 1396964276]: r-xp /bin/split\n"
      "split 10602  4619.907778:    1001001  cpu-clock: \n"
      "\t            1674 func_a+0x24 (/bin/split)\n";
  core::Diagnostics diagnostics;
  core::Profile p = read_ok(text, &diagnostics);
  EXPECT_EQ(p.total(0), 1);
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  EXPECT_NE(diagnostics.warnings()[0].find("skipped 2 side-band"), std::string::npos)
      << diagnostics.warnings()[0];
}

TEST(PerfScriptModel, HeadersWithoutEventCountUnderEvent) {
  // perf script -F comm,pid,tid,time,ip,sym,dso
  const char* text =
      "split 10699/10701  4620.1: \n\t1674 func_a (/bin/split)\n\n"
      "split 10699/10702  4620.2: \n\t1674 func_a (/bin/split)\n";
  core::Profile p = read_ok(text);
  EXPECT_EQ(sample_type_names(p), (Names{"samples/count", "event/count"}));
  ASSERT_EQ(p.sample_count(), 2u);
  EXPECT_EQ(num_label(p, 0, "pid"), 10699);
  EXPECT_EQ(num_label(p, 1, "tid"), 10702);
}

TEST(PerfScriptModel, SampleWithoutFramesHasAnEmptyStack) {
  const char* text = "p 1 1.0: 5 ev:\n\np 1 1.5: 5 ev:\n\t1 f (/p)\n";
  core::Profile p = read_ok(text);
  ASSERT_EQ(p.sample_count(), 2u);
  EXPECT_TRUE(p.stack(0).empty());
  EXPECT_EQ(p.values(0)[1], 5);
}

TEST(PerfScriptModel, CrlfLineEndings) {
  const char* text = "p 1 1.0: 5 ev:\r\n\t1 f (/p)\r\n\r\np 1 1.5: 5 ev:\r\n\t1 f (/p)\r\n";
  core::Profile p = read_ok(text);
  ASSERT_EQ(p.sample_count(), 1u);
  EXPECT_EQ(p.values(0)[0], 2);
  EXPECT_EQ(p.str(p.mapping(1).file), "/p");
}

TEST(PerfScriptModel, CapturedOnSetsTheStartTime) {
  const char* text =
      "# ========\n# captured on    : Thu Feb 29 00:00:00 2024\n# hostname : box\n# ========\n#\n"
      "p 1 1.0: 5 ev:\n\t1 f (/p)\n";
  core::Profile p = read_ok(text);
  EXPECT_EQ(p.time_nanos, 1709164800LL * 1000000000);  // date -u -d 2024-02-29 +%s
  EXPECT_EQ(p.attribute("perf.hostname"), "box");
}

}  // namespace
}  // namespace tally::test
