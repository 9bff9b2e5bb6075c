// The line parsers on lines taken from real `perf script` output (perf 6.1 on this machine,
// perf 4.15 in speedscope's files) and on the variants -F and demangled C++ produce.
#include <gtest/gtest.h>

#include "core/error.h"
#include "formats/perfscript/perf_script_lines.h"

namespace tally::perfscript {
namespace {

TEST(PerfScriptHeader, DefaultFields) {
  auto h = parse_sample_header("split 13067   981.768286:    1000000 cpu-clock: ", 1);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->comm, "split");
  EXPECT_EQ(h->tid, 13067);
  EXPECT_EQ(h->pid, std::nullopt);
  EXPECT_EQ(h->cpu, std::nullopt);
  EXPECT_EQ(h->time_nanos, 981768286000);
  EXPECT_EQ(h->period, 1000000);
  EXPECT_EQ(h->event, "cpu-clock");
  EXPECT_EQ(h->rest, "");
  EXPECT_FALSE(h->side_band);
}

TEST(PerfScriptHeader, CommWithSpacesPidTidAndCpu) {
  auto h = parse_sample_header("V8 WorkerThread 2 25607/25610 [003] 4794564.109216: 1 cycles:u:", 7);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->comm, "V8 WorkerThread 2");
  EXPECT_EQ(h->pid, 25607);
  EXPECT_EQ(h->tid, 25610);
  EXPECT_EQ(h->cpu, 3);
  EXPECT_EQ(h->time_nanos, 4794564109216000);
  EXPECT_EQ(h->period, 1);
  EXPECT_EQ(h->event, "cycles:u");
}

TEST(PerfScriptHeader, NoPeriodAndRightAlignedComm) {
  auto h = parse_sample_header("simple-terminat     9/9     198791.127353: cpu-clock: ", 1);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->comm, "simple-terminat");
  EXPECT_EQ(h->period, std::nullopt);
  EXPECT_EQ(h->event, "cpu-clock");
  h = parse_sample_header("           split 10562  4615.983828: cpu-clock: ", 1);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->comm, "split");
}

TEST(PerfScriptHeader, OneLineSampleKeepsTheFrameAsRest) {
  auto h = parse_sample_header(
      "           split 10562  4615.984826:    1001001 cpu-clock:      5561621cc674 "
      "func_a+0x24 (/work/shared/fixtures/bin/split)", 1);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->period, 1001001);
  EXPECT_EQ(h->rest, "5561621cc674 func_a+0x24 (/work/shared/fixtures/bin/split)");
}

TEST(PerfScriptHeader, TracepointEventAndNanosecondTime) {
  auto h = parse_sample_header(
      "swapper     0 [001] 12.000000001: sched:sched_switch: prev_comm=swapper/1 prev_pid=0", 1);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->time_nanos, 12000000001);
  EXPECT_EQ(h->event, "sched:sched_switch");
  EXPECT_EQ(h->rest, "prev_comm=swapper/1 prev_pid=0");
}

TEST(PerfScriptHeader, MissingFields) {
  // -F comm,pid,time,ip,sym,dso: no event.
  auto h = parse_sample_header("split 10562  4615.983828:      7f18eb5f49b4 _dl_lookup (ld.so)", 1);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->event, "");
  EXPECT_EQ(h->period, std::nullopt);
  EXPECT_EQ(h->rest, "7f18eb5f49b4 _dl_lookup (ld.so)");
  // -F time,event: nothing before the time.
  h = parse_sample_header("4615.983828: cpu-clock:", 1);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->comm, "");
  EXPECT_EQ(h->tid, std::nullopt);
}

TEST(PerfScriptHeader, SideBandRecords) {
  auto h = parse_sample_header("split 10602  4619.906794: PERF_RECORD_MMAP2 10602/10602: [0x55]: "
                               "r-xp /work/shared/fixtures/bin/split", 1);
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->side_band);
}

TEST(PerfScriptHeader, NotAHeader) {
  EXPECT_FALSE(parse_sample_header("split 13067   981.768286 cpu-clock:", 1));  // no ':' on time
  EXPECT_FALSE(parse_sample_header("split 13067   981.7", 1));
  EXPECT_FALSE(parse_sample_header("main;func_a 42", 1));
  EXPECT_FALSE(parse_sample_header("", 1));
}

TEST(PerfScriptHeader, OutOfRangeNumbersAreErrors) {
  try {
    (void)parse_sample_header("x 99999999999999999999 1.5: cpu-clock:", 12);
    FAIL() << "no error";
  } catch (const core::FormatError& e) {
    EXPECT_EQ(e.position(), 12u);
    EXPECT_NE(std::string(e.what()).find("thread id '99999999999999999999'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)parse_sample_header("x 1 99999999999.5: cpu-clock:", 1), core::FormatError);
}

TEST(PerfScriptFrame, AddressSymbolOffsetDso) {
  FrameLine f = parse_frame_line("1684 func_a+0x24 (/tmp/tally-fx/bin/split-nofp)", 1);
  EXPECT_EQ(f.address, 0x1684u);
  EXPECT_EQ(f.symbol, "func_a");
  EXPECT_EQ(f.dso, "/tmp/tally-fx/bin/split-nofp");
  EXPECT_TRUE(f.has_symbol);
  EXPECT_TRUE(f.has_dso);
  EXPECT_FALSE(f.inlined);
}

TEST(PerfScriptFrame, UnknownAndKernel) {
  FrameLine f = parse_frame_line("ffffffffad14d115 [unknown] ([kernel.kallsyms])", 1);
  EXPECT_EQ(f.address, 0xffffffffad14d115u);
  EXPECT_EQ(f.symbol, "[unknown]");
  EXPECT_EQ(f.dso, "[kernel.kallsyms]");
}

TEST(PerfScriptFrame, DemangledCppWithSpacesAndParentheses) {
  FrameLine f = parse_frame_line(
      "401136 foo(int, char const*)+0x16 (/usr/bin/prog (deleted))", 1);
  EXPECT_EQ(f.symbol, "foo(int, char const*)");
  EXPECT_EQ(f.dso, "/usr/bin/prog (deleted)");
  f = parse_frame_line("10 std::function<void (int)>::operator()(int) const+0x2 (/a.out)", 1);
  EXPECT_EQ(f.symbol, "std::function<void (int)>::operator()(int) const");
  EXPECT_EQ(f.dso, "/a.out");
  f = parse_frame_line("20 operator+ (/a.out)", 1);  // no offset to strip
  EXPECT_EQ(f.symbol, "operator+");
}

TEST(PerfScriptFrame, Inlined) {
  FrameLine f = parse_frame_line("e460 resolve_map+0x840 (inlined)", 1);
  EXPECT_TRUE(f.inlined);
  EXPECT_EQ(f.symbol, "resolve_map");
}

TEST(PerfScriptFrame, FieldsLeftOut) {
  FrameLine f = parse_frame_line("1674", 1);  // -F ip
  EXPECT_EQ(f.address, 0x1674u);
  EXPECT_FALSE(f.has_symbol);
  EXPECT_FALSE(f.has_dso);
  f = parse_frame_line("1674 foo(int)", 1);  // -F ip,sym: "(int)" is no DSO
  EXPECT_EQ(f.symbol, "foo(int)");
  EXPECT_FALSE(f.has_dso);
  f = parse_frame_line("1674 (/bin/x)", 1);  // -F ip,dso
  EXPECT_FALSE(f.has_symbol);
  EXPECT_EQ(f.dso, "/bin/x");
  // Fields printed after the DSO on a one-line sample.
  f = parse_frame_line("7f18eb5f49b4 _dl_lookup_symbol_x+0x44 (/lib/ld.so) insn: 85 d2", 1);
  EXPECT_EQ(f.symbol, "_dl_lookup_symbol_x");
  EXPECT_EQ(f.dso, "/lib/ld.so");
}

TEST(PerfScriptFrame, MalformedFramesAreErrors) {
  EXPECT_THROW(parse_frame_line("main (/bin/x)", 3), core::FormatError);  // no address
  EXPECT_THROW(parse_frame_line("12345678901234567 f (/x)", 3), core::FormatError);  // > 64 bits
  try {
    parse_frame_line("1674 func_a+0x24 (/tmp/tally-fx/bi", 9);
    FAIL() << "no error";
  } catch (const core::FormatError& e) {
    EXPECT_EQ(e.position(), 9u);
    EXPECT_NE(std::string(e.what()).find("cut short"), std::string::npos) << e.what();
  }
}

TEST(PerfScriptSourceLine, FileAndLine) {
  auto s = parse_source_line("  split.cc:26");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->file, "split.cc");
  EXPECT_EQ(s->line, 26);
  s = parse_source_line("  ??:0");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->file, "");
  s = parse_source_line("  /src/a.c:7 (discriminator 2)");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->file, "/src/a.c");
  EXPECT_EQ(s->line, 7);
  EXPECT_FALSE(parse_source_line("  split 1 2.0: cpu-clock:"));
  EXPECT_FALSE(parse_source_line("  no colon"));
}

TEST(PerfScriptCapturedOn, ReadsCtimeAsUtc) {
  // date -u -d '2018-08-15 16:01:24' +%s = 1534348884
  EXPECT_EQ(parse_captured_on("Wed Aug 15 16:01:24 2018"), 1534348884LL * 1000000000);
  // date -u -d '2024-02-29 00:00:00' +%s = 1709164800 (leap day), ctime pads the day
  EXPECT_EQ(parse_captured_on("Thu Feb 29 00:00:00 2024"), 1709164800LL * 1000000000);
  EXPECT_EQ(parse_captured_on("Thu Jan  1 00:00:00 1970"), 0);
  EXPECT_FALSE(parse_captured_on("2018-08-15 16:01:24"));
  EXPECT_FALSE(parse_captured_on("Wed Foo 15 16:01:24 2018"));
  EXPECT_FALSE(parse_captured_on("Wed Aug 15 16:01 2018"));
}

}  // namespace
}  // namespace tally::perfscript
