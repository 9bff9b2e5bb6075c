// Every file of ../shared/conformance/perf-script/speedscope (speedscope's own test
// inputs). The expected numbers were counted over the files with grep/awk, not with tally:
//   samples:   grep -v '^#' F | awk 'BEGIN{RS=""} END{print NR}'   (one paragraph per sample)
//   distinct:  awk 'BEGIN{RS="";FS="\n"} {k=""; split($1,h," "); for(i=1;h[i]!~/^[0-9]+\.[0-9]+:$/;i++)
//                k=k" "h[i]; for(i=2;i<=NF;i++) k=k"|"$i; S[k]} END{print length(S)}'
//              (comm, pid/tid and [cpu] plus the frame lines: the samples tally merges)
//   leaves:    awk 'BEGIN{RS="";FS="\n"} {split($2,a," "); print a[2]}' F | sort | uniq -c
//   labels:    grep -v '^[#\t]' F | awk '{print $1, $2}' | sort | uniq -c
//   duration:  last minus first "TIME:" token; time_nanos: date -u -d '2018-08-15 16:01:24' +%s
#include <gtest/gtest.h>

#include "perf_script_view.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

std::string speedscope(const std::string& name) {
  return shared("conformance/perf-script/speedscope/" + name);
}

using Names = std::vector<std::string>;
using Totals = std::map<std::string, int64_t>;

TEST(PerfScriptSpeedscope, SimpleIsOneSampleWithItsWholeStack) {
  for (const char* name : {"simple.linux-perf.txt", "one-sample.linux-perf.txt"}) {
    SCOPED_TRACE(name);
    auto p = read_perf_script_file(speedscope(name));
    ASSERT_TRUE(p) << p.error().message;
    ASSERT_EQ(p->sample_count(), 1u);
    EXPECT_EQ(sample_type_names(*p), (Names{"samples/count", "cpu-clock/nanoseconds"}));
    EXPECT_EQ(p->values(0)[0], 1);
    EXPECT_EQ(p->values(0)[1], 1001001);
    EXPECT_EQ(p->period, 1001001);
    EXPECT_EQ(p->str(p->period_type.type), "cpu-clock");
    EXPECT_EQ(p->duration_nanos, 0);
    EXPECT_EQ(p->time_nanos, 0);  // no "# captured on" header
    // Itanium names demangled, the mangled one kept as system name; "[unknown] ([unknown])"
    // is a location without lines.
    EXPECT_EQ(frame_names(*p, 0),
              (Names{"beta()", "delta()", "main", "__libc_start_main", "[unknown]"}));
    EXPECT_EQ(frame_system_names(*p, 0),
              (Names{"_Z4betav", "_Z5deltav", "main", "__libc_start_main", "[unknown]"}));
    EXPECT_EQ(str_label(*p, 0, "comm"), "simple-terminat");
    EXPECT_EQ(num_label(*p, 0, "tid"), 10);
    EXPECT_EQ(num_label(*p, 0, "pid"), std::nullopt);  // a lone number is perf's tid
    EXPECT_EQ(num_label(*p, 0, "cpu"), std::nullopt);

    auto stack = p->stack(0);
    ASSERT_EQ(stack.size(), 5u);
    const core::Location& leaf = p->location(stack[0]);
    EXPECT_EQ(leaf.address, 0x643u);
    ASSERT_NE(leaf.mapping, 0u);
    EXPECT_EQ(p->str(p->mapping(leaf.mapping).file), "/workdir/simple-terminates");
    EXPECT_TRUE(p->mapping(leaf.mapping).has_functions);
    EXPECT_EQ(p->mapping(leaf.mapping).start, 0u);  // perf script prints no ranges
    const core::Location& libc = p->location(stack[3]);
    EXPECT_EQ(p->str(p->mapping(libc.mapping).file), "/lib/x86_64-linux-gnu/libc-2.27.so");
    const core::Location& unknown = p->location(stack[4]);
    EXPECT_EQ(unknown.address, 0x6ce258d4c544155u);
    EXPECT_EQ(unknown.mapping, 0u);
    EXPECT_TRUE(unknown.lines.empty());
  }
}

TEST(PerfScriptSpeedscope, SimpleWithHeaderKeepsTheHeaderAndCaptureTime) {
  auto p = read_perf_script_file(speedscope("simple-with-header.linux-perf.txt"));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->total(0), 136);
  EXPECT_EQ(p->total(1), 136 * 1001001);
  EXPECT_EQ(p->sample_count(), 30u);
  EXPECT_EQ(p->time_nanos, 1534348884LL * 1000000000);  // Wed Aug 15 16:01:24 2018 UTC
  EXPECT_EQ(p->duration_nanos, 135382000);              // 198789.613576 - 198789.478194
  EXPECT_EQ(p->attribute("perf.hostname"), "e2b5bab9a538");
  EXPECT_EQ(p->attribute("perf.perf_version"), "4.15.18");
  EXPECT_EQ(leaf_totals(*p, 0),
            (Totals{{"beta()", 47}, {"alpha()", 44}, {"delta()", 23}, {"gamma()", 22}}));
  // The first sample: 63c _Z4betav, 695 _Z5deltav, 6f3 main, __libc_start_main, [unknown].
  EXPECT_EQ(frame_names(*p, 0),
            (Names{"beta()", "delta()", "main", "__libc_start_main", "[unknown]"}));
  EXPECT_EQ(p->location(p->stack(0)[0]).address, 0x63cu);
}

TEST(PerfScriptSpeedscope, SimpleWithPidHasPidTidAndNoPeriod) {
  auto p = read_perf_script_file(speedscope("simple-with-pid.linux-perf.txt"));
  ASSERT_TRUE(p) << p.error().message;
  // "cpu-clock:" right after the time: no period, so each sample counts 1 and the unit is
  // a count, not nanoseconds.
  EXPECT_EQ(sample_type_names(*p), (Names{"samples/count", "cpu-clock/count"}));
  EXPECT_EQ(p->total(0), 137);
  EXPECT_EQ(p->total(1), 137);
  EXPECT_EQ(p->period, 0);
  EXPECT_EQ(p->sample_count(), 28u);
  EXPECT_EQ(p->duration_nanos, 136462000);
  for (size_t i = 0; i < p->sample_count(); ++i) {
    EXPECT_EQ(num_label(*p, i, "pid"), 9);
    EXPECT_EQ(num_label(*p, i, "tid"), 9);
  }
  EXPECT_EQ(leaf_totals(*p, 0), (Totals{{"beta()", 58},
                                        {"alpha()", 36},
                                        {"gamma()", 23},
                                        {"delta()", 19},
                                        {"[unknown]", 1}}));
}

TEST(PerfScriptSpeedscope, ForksHasOneCommPerThreadAndCpuLabels) {
  auto p = read_perf_script_file(speedscope("forks.linux-perf.txt"));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->total(0), 561);
  EXPECT_EQ(p->sample_count(), 64u);
  EXPECT_EQ(p->duration_nanos, 140079000);
  EXPECT_EQ(total_where(*p, 0, "forks", 9), 138);
  EXPECT_EQ(total_where(*p, 0, "forks", 10), 49);
  EXPECT_EQ(total_where(*p, 0, "forks", 11), 50);
  EXPECT_EQ(total_where(*p, 0, "swapper", 0), 324);
  int64_t per_cpu[4] = {};
  for (size_t i = 0; i < p->sample_count(); ++i) {
    auto cpu = num_label(*p, i, "cpu");
    ASSERT_TRUE(cpu && *cpu >= 0 && *cpu < 4);
    per_cpu[*cpu] += p->values(i)[0];
  }
  EXPECT_EQ(per_cpu[0], 140);
  EXPECT_EQ(per_cpu[1], 140);
  EXPECT_EQ(per_cpu[2], 140);
  EXPECT_EQ(per_cpu[3], 141);
  // 325 kernel leaves "[unknown] ([kernel.kallsyms])" and 2 "[unknown] ([unknown])".
  EXPECT_EQ(leaf_totals(*p, 0), (Totals{{"[unknown]", 327},
                                        {"alpha()", 93},
                                        {"beta()", 92},
                                        {"gamma()", 26},
                                        {"delta()", 23}}));
  // The first sample (forks, tid 9, cpu 2: gamma < main < __libc_start_main < [unknown])
  // occurs 19 times with those labels.
  EXPECT_EQ(frame_names(*p, 0), (Names{"gamma()", "main", "__libc_start_main", "[unknown]"}));
  EXPECT_EQ(p->values(0)[0], 19);
  EXPECT_EQ(num_label(*p, 0, "cpu"), 2);
  // The second: swapper's 25-frame stack, kernel frames in mapping [kernel.kallsyms].
  EXPECT_EQ(str_label(*p, 1, "comm"), "swapper");
  auto stack = p->stack(1);
  ASSERT_FALSE(stack.empty());
  EXPECT_EQ(p->location(stack[0]).address, 0xffffffffad14d115u);
  EXPECT_EQ(p->str(p->mapping(p->location(stack[0]).mapping).file), "[kernel.kallsyms]");
  EXPECT_FALSE(p->mapping(p->location(stack[0]).mapping).has_functions);
}

TEST(PerfScriptSpeedscope, SystemWide) {
  auto p = read_perf_script_file(speedscope("system-wide.linux-perf.txt"));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->total(0), 556);
  EXPECT_EQ(p->total(1), 556 * 1001001);
  EXPECT_EQ(p->sample_count(), 38u);
  EXPECT_EQ(p->duration_nanos, 138255000);
  EXPECT_EQ(total_where(*p, 0, "swapper", 0), 418);
  EXPECT_EQ(total_where(*p, 0, "simple-terminat", 9), 138);
  EXPECT_EQ(leaf_totals(*p, 0), (Totals{{"[unknown]", 419},
                                        {"beta()", 53},
                                        {"alpha()", 41},
                                        {"delta()", 23},
                                        {"gamma()", 20}}));
}

TEST(PerfScriptSpeedscope, RustMangledNamesAreKeptAsPrinted) {
  auto p = read_perf_script_file(speedscope("rust-mangled.linux-perf.txt"));
  ASSERT_TRUE(p) << p.error().message;
  // The event keeps its modifiers; task-clock counts nanoseconds.
  EXPECT_EQ(sample_type_names(*p), (Names{"samples/count", "task-clock:ppp/nanoseconds"}));
  EXPECT_EQ(p->total(0), 96);
  EXPECT_EQ(p->total(1), 96LL * 16949152);
  EXPECT_EQ(p->period, 16949152);
  EXPECT_EQ(p->sample_count(), 53u);
  EXPECT_EQ(p->duration_nanos, 1610220000);  // 150522.601749 - 150520.991529
  EXPECT_EQ(total_where(*p, 0, "trace", 6061), 96);
  // Rust's v0 "_R" names are not Itanium names: name and system name are the symbol as
  // printed, without the "+0x144" offset.
  const Names first{
      "_RINvNtCslw2YnFSxGUT_10ppv_lite867generic5dmap2NtB2_13u32x4_genericNCNvXsy_B2_BI_NtNtNtCs"
      "TACXlTRjQ_4core3ops5arith3Add3add0ECs2zQ9tAH61OF_11rand_chacha",
      "_RINvNtCse0yjq9ZQveU_3std2rt10lang_startuECs8K9WJNlS7Dz_5trace", "__libc_start_main",
      "_start"};
  EXPECT_EQ(frame_names(*p, 0), first);
  EXPECT_EQ(frame_system_names(*p, 0), first);
  auto totals = leaf_totals(*p, 0);
  EXPECT_EQ(totals["_RNvCs8K9WJNlS7Dz_5trace17multiply_matrices"], 6);
  EXPECT_EQ(totals["_RNvXsb_NtCsfiKabdrepoq_5alloc3vecINtB5_3VecdEINtNtNtCsTACXlTRjQ_4core3ops5"
                   "index5IndexjE5indexCs8K9WJNlS7Dz_5trace"],
            15);
  // multiply_matrices was sampled at 4 addresses (+0x208, +0x28c, +0x2a8, +0x2d4): 4
  // locations, 1 function.
  size_t locations = 0, functions = 0;
  for (const core::Location& l : p->locations)
    if (!l.lines.empty() &&
        p->str(p->function(l.lines[0].function).name).ends_with("17multiply_matrices"))
      ++locations;
  for (const core::Function& f : p->functions)
    if (p->str(f.name).ends_with("17multiply_matrices")) ++functions;
  EXPECT_EQ(locations, 4u);
  EXPECT_EQ(functions, 1u);
}

}  // namespace
}  // namespace tally::test
