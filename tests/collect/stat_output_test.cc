// tally stat's output formats, against miniprof's own printf format for the trace line and
// against totals computed here for the summary.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "collect/stat_output.h"
#include "support/test_support.h"

namespace tally::collect {
namespace {

TraceLine line(size_t event, int cpu, uint64_t stamp, uint64_t value, uint64_t enabled,
               uint64_t running, uint64_t interval) {
  return TraceLine{event, cpu, stamp, CounterIncrease{value, enabled, running}, interval};
}

// miniprof prints each line with printf("%d\t%d\t%llu\t%llu\t%.3f\t%d\n", ...).
std::string miniprof_line(int event, int core, unsigned long long stamp, unsigned long long value,
                          double running, int logical_time) {
  char text[256];
  std::snprintf(text, sizeof(text), "%d\t%d\t%llu\t%llu\t%.3f\t%d\n", event, core, stamp, value,
                running, logical_time);
  return text;
}

TEST(StatOutput, TraceLineIsMiniprofs) {
  EXPECT_EQ(format_trace_line(line(0, 1, 123456789012345, 100000000, 100, 100, 1)),
            miniprof_line(0, 1, 123456789012345ULL, 100000000ULL, 1.0, 1));
  EXPECT_EQ(format_trace_line(line(3, 17, 5, 0, 3000, 1000, 42)),
            miniprof_line(3, 17, 5, 0, 1.0 / 3.0, 42));
  EXPECT_EQ(format_trace_line(line(1, 0, 9, 18446744073709551615ULL, 2, 1, 7)),
            miniprof_line(1, 0, 9, 18446744073709551615ULL, 0.5, 7));
  // Never enabled: 0.000 where miniprof would print nan.
  EXPECT_EQ(format_trace_line(line(0, 0, 1, 0, 0, 0, 2)), miniprof_line(0, 0, 1, 0, 0.0, 2));
  EXPECT_EQ(format_trace_line(line(2, 3, 4, 5, 8, 6, 9), ","), "2,3,4,5,0.750,9\n");
}

std::vector<CounterRequest> requests() {
  return {CounterRequest{"CLK", *parse_event("task-clock", CpuVendor::amd), false},
          CounterRequest{"FLT", *parse_event("page-faults", CpuVendor::amd), true}};
}

TEST(StatOutput, TraceJsonLine) {
  auto events = requests();
  auto object = nlohmann::json::parse(format_trace_json(line(1, 2, 3, 4, 10, 5, 6), events[1]));
  EXPECT_EQ(object["event"], 1);
  EXPECT_EQ(object["name"], "FLT");
  EXPECT_EQ(object["core"], 2);
  EXPECT_EQ(object["timestamp"], 3);
  EXPECT_EQ(object["increase"], 4);
  EXPECT_DOUBLE_EQ(object["running"].get<double>(), 0.5);
  EXPECT_EQ(object["interval"], 6);
  EXPECT_EQ(object["enabled_ns"], 10);
  EXPECT_EQ(object["running_ns"], 5);
}

// Two intervals on CPUs 0 and 1 for CLK; FLT on CPU 0 only, multiplexed half the time.
StatSummary two_intervals() {
  StatSummary summary(2);
  summary.add({line(0, 0, 1, 100, 100, 100, 1), line(1, 0, 1, 10, 100, 50, 1),
               line(0, 1, 1, 100, 100, 100, 1)});
  summary.add({line(0, 0, 2, 60, 60, 60, 2), line(1, 0, 2, 30, 60, 30, 2),
               line(0, 1, 2, 50, 60, 60, 2)});
  return summary;
}

TEST(StatSummary, TotalsScaledPerCpu) {
  StatSummary summary = two_intervals();
  const auto& clk = summary.events()[0];
  EXPECT_EQ(clk.total, 310u);
  EXPECT_DOUBLE_EQ(clk.scaled, 310.0);
  ASSERT_EQ(clk.cpus.size(), 2u);
  EXPECT_EQ(clk.cpus[0].cpu, 0);
  EXPECT_EQ(clk.cpus[0].value, 160u);
  EXPECT_EQ(clk.cpus[1].value, 150u);
  const auto& flt = summary.events()[1];
  EXPECT_EQ(flt.total, 40u);
  // 40 counted while running 80 of 160 ns enabled: 80 estimated.
  EXPECT_DOUBLE_EQ(flt.scaled, 80.0);
  ASSERT_EQ(flt.cpus.size(), 1u);
}

TEST(StatSummary, Layouts) {
  auto events = requests();
  StatSummary summary = two_intervals();
  StatOutcome outcome;
  outcome.intervals = 2;
  outcome.elapsed_ns = 2000000000;  // 2 s
  StatOptions options;
  options.cpus = {0, 1};
  options.interval_ms = 1000;
  options.events = events;

  std::string table = format_summary_table(summary, events, outcome, options);
  EXPECT_NE(table.find("2 intervals of 1000 ms, 2.000 s counted, 2 CPUs, system-wide"),
            std::string::npos)
      << table;
  // CLK: total 310, 155 per second, min 150 on cpu1, max 160 on cpu0.
  EXPECT_NE(table.find("CLK   task-clock   ns"), std::string::npos) << table;
  EXPECT_NE(table.find("150 (cpu1)"), std::string::npos) << table;
  EXPECT_NE(table.find("160 (cpu0)"), std::string::npos) << table;
  EXPECT_NE(table.find("50.0%"), std::string::npos) << table;  // FLT ran half the time

  std::string csv = format_summary_separated(summary, events, outcome, ",");
  EXPECT_EQ(csv,
            "event,name,counter,unit,total,scaled,per_second,min_cpu,min,max_cpu,max,running,"
            "seconds\n"
            "0,CLK,task-clock,ns,310,310,155.000,1,150,0,160,1.0000,2.000000\n"
            "1,FLT,page-faults,count,40,80,40.000,0,40,0,40,0.5000,2.000000\n");

  auto json = nlohmann::json::parse(format_summary_json(summary, events, outcome, options));
  EXPECT_EQ(json["intervals"], 2);
  EXPECT_EQ(json["scope"], "system-wide");
  ASSERT_EQ(json["events"].size(), 2u);
  EXPECT_EQ(json["events"][0]["total"], 310);
  EXPECT_EQ(json["events"][0]["unit"], "nanoseconds");
  EXPECT_EQ(json["events"][0]["min"]["cpu"], 1);
  EXPECT_EQ(json["events"][1]["per_node"], true);
  EXPECT_DOUBLE_EQ(json["events"][1]["scaled"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(json["events"][1]["per_second"].get<double>(), 40.0);
  EXPECT_EQ(json["events"][1]["cpus"].size(), 1u);
  EXPECT_FALSE(json.contains("command"));
}

TEST(StatPrinter, TraceGoesToTheTemporaryFileAndInPlaceOnCommit) {
  auto events = requests();
  test::TempDir dir;
  const std::string path = dir.file("trace");
  auto out = io::AtomicFileWriter::open(path);
  ASSERT_TRUE(out) << out.error().message;
  StatPrinter printer(events, StatPrintOptions{}, *out);
  EXPECT_TRUE(printer.interval({line(0, 0, 1, 100, 100, 100, 1), line(1, 0, 1, 10, 100, 50, 1)}));
  StatOutcome outcome;
  StatOptions options;
  EXPECT_TRUE(printer.finish(outcome, options));
  const std::string expected = "0\t0\t1\t100\t1.000\t1\n1\t0\t1\t10\t0.500\t1\n";
  // Written as it came, but not in place until the run is over.
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(test::read_text(out->writing_to()), expected);
  ASSERT_TRUE(out->commit());
  EXPECT_EQ(test::read_text(path), expected);
  EXPECT_EQ(printer.write_error(), 0);
  EXPECT_FALSE(printer.write_failure());
}

TEST(StatPrinter, AFailedWriteIsKeptWithItsErrno) {
  auto events = requests();
  auto out = io::AtomicFileWriter::open("/dev/full");
  ASSERT_TRUE(out) << out.error().message;
  StatPrinter printer(events, StatPrintOptions{}, *out);
  EXPECT_FALSE(printer.interval({line(0, 0, 1, 100, 100, 100, 1)}));
  EXPECT_EQ(printer.write_error(), ENOSPC);
  ASSERT_TRUE(printer.write_failure());
  EXPECT_EQ(printer.write_failure()->message, "/dev/full: cannot write: No space left on device");
  StatOutcome outcome;
  StatOptions options;
  EXPECT_FALSE(printer.finish(outcome, options));
}

}  // namespace
}  // namespace tally::collect
