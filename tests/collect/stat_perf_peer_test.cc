// `tally stat` against perf stat -a -A counting the same run at the same time.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "collect/cpu_topology.h"
#include "stat_trace_lines.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

// perf stat -a -A over the same run. System-wide, task-clock counts the time each CPU's
// counter was on, idle included, so both tools must count over the same span. tally counts
// from just before the workload's exec to just after its exit. perf wraps tally, but starts
// disabled (-D -1) and is switched on and off through its control FIFO by the workload
// itself, first and last thing: so neither tally's start-up (hundreds of ms under ASan on
// a loaded machine) nor its exit is in perf's count. What remains between the two spans is
// the workload's exec and the FIFO round trips, a few ms against a run of a second or more.
TEST(StatCliPerfPeer, SumOfIncreasesAgreesWithPerfStatPerCpu) {
  const std::string perf = find_program("perf");
  TALLY_REQUIRE_PEER(perf, "perf");
  TempDir dir;
  const std::string perf_out = dir.file("perf.csv");
  const std::string ctl = dir.file("ctl"), ack = dir.file("ack");
  ASSERT_EQ(mkfifo(ctl.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo(ack.c_str(), 0600), 0);
  auto r = run({perf, "stat", "-a", "-A", "-e", "task-clock", "-x", ",", "-o", perf_out, "-D",
                "-1", "--control", "fifo:" + ctl + "," + ack, "--", tally_binary(), "stat", "-e",
                "CLK", "task-clock", "0", "0", "0", "-I", "100", "--", busy(), "--perf-control",
                ctl, ack, "1000", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<int, double> tally_ns;
  for (const Line& line : parse_trace(r.out)) tally_ns[line.core] += static_cast<double>(line.increase);
  std::map<int, double> perf_ns;
  std::istringstream csv(read_text(perf_out));
  std::string text;
  while (std::getline(csv, text)) {
    // CPU0,1508.22,msec,task-clock,...
    std::smatch m;
    if (std::regex_search(text, m, std::regex(R"(^CPU(\d+),([0-9.]+),msec,task-clock,)")))
      perf_ns[std::stoi(m[1])] = std::stod(m[2]) * 1e6;
  }
  ASSERT_EQ(perf_ns.size(), collect::online_cpus().size()) << read_text(perf_out);
  ASSERT_EQ(tally_ns.size(), perf_ns.size());
  for (const auto& [cpu, theirs] : perf_ns) {
    EXPECT_GT(theirs, 0.99e9) << "the run lasts at least as long as the workload";
    EXPECT_NEAR(tally_ns[cpu], theirs, 0.02 * theirs) << "CPU " << cpu;
  }
}

}  // namespace
}  // namespace tally::test
