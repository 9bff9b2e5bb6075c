// `tally stat` run as a subprocess: miniprof's trace line by line and field by field, the
// counts against the command's own CPU time, per-node events, the summary formats, errors,
// signals and exit codes. (Against perf stat -a -A: stat_perf_peer_test.cc.)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "collect/cpu_topology.h"
#include "stat_trace_lines.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

TEST(StatCli, TraceLinesForEveryCpuEveryIntervalEveryFieldChecked) {
  const std::vector<int> cpus = collect::online_cpus();
  // Monotonic timestamps are nanoseconds, so they can be checked against task-clock.
  auto r = run_tally({"stat", "-e", "CLK", "task-clock", "0", "0", "0", "-I", "100", "--clock",
                      "monotonic", "--", busy(), "600", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto lines = parse_trace(r.out);
  auto intervals = by_interval(lines);
  ASSERT_GE(intervals.size(), 6u) << "600 ms of CPU is at least 6 intervals of 100 ms";
  int expected_interval = 1;
  for (const auto& [number, group] : intervals) {
    EXPECT_EQ(number, expected_interval++) << "logical time counts intervals from 1";
    ASSERT_EQ(group.size(), cpus.size()) << "one line per CPU in interval " << number;
    for (size_t i = 0; i < group.size(); ++i) {
      EXPECT_EQ(group[i].event, 0);
      EXPECT_EQ(group[i].core, cpus[i]) << "CPUs in order";
      EXPECT_EQ(group[i].running, 1.0) << "a software counter is never multiplexed";
      if (i > 0) {
        EXPECT_GE(group[i].timestamp, group[i - 1].timestamp);
      }
      if (number != static_cast<int>(intervals.size())) {
        EXPECT_GT(group[i].increase, 0u) << "system-wide task-clock grows with time";
      }
    }
  }
  // Per CPU: timestamps grow; system-wide task-clock is the time the counter was on, so
  // the increases from interval 2 on add up to the time between the first and last reads
  // (each timestamp is taken just before its CPU's counters are read).
  for (int cpu : cpus) {
    std::vector<Line> mine;
    for (const Line& line : lines)
      if (line.core == cpu) mine.push_back(line);
    uint64_t counted = 0;
    for (size_t k = 1; k < mine.size(); ++k) {
      EXPECT_GT(mine[k].timestamp, mine[k - 1].timestamp);
      counted += mine[k].increase;
    }
    const double elapsed = static_cast<double>(mine.back().timestamp - mine.front().timestamp);
    EXPECT_NEAR(static_cast<double>(counted), elapsed, 0.01 * elapsed) << "CPU " << cpu;
  }
}

TEST(StatCli, DefaultTimestampsAreTheCycleCounterAndGrow) {
  auto r = run_tally({"stat", "-e", "CLK", "cpu-clock", "0", "0", "0", "-I", "50", "--duration",
                      "0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = parse_trace(r.out);
  ASSERT_FALSE(lines.empty());
  std::map<int, uint64_t> last;
  for (const Line& line : lines) {
    EXPECT_GT(line.timestamp, last[line.core]);
    last[line.core] = line.timestamp;
  }
}

TEST(StatCli, CommandOnlyCountsTheCommandsCpuTime) {
  TempDir dir;
  const std::string cpu_time = dir.file("cpu_ns");
  auto r = run_tally({"stat", "--command-only", "-e", "CLK", "task-clock", "0", "0", "0", "-I",
                      "100", "--", busy(), "400", "2", cpu_time});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = parse_trace(r.out);
  ASSERT_FALSE(lines.empty());
  double counted = 0;
  for (const Line& line : lines) {
    EXPECT_GE(line.running, 0.0);
    EXPECT_LE(line.running, 1.0);
    counted += static_cast<double>(line.increase);
  }
  // The workload's own CPU clock, read just before it exits.
  const double own = std::stod(read_text(cpu_time));
  EXPECT_GT(own, 0.8e9);
  EXPECT_NEAR(counted, own, 0.02 * own);
}

TEST(StatCli, HardwareEventsSayNotSupportedPerEvent) {
  auto r = run_tally({"stat", "-e", "CYC", "cycles", "0", "0", "0", "-e", "CLK", "cpu-clock",
                      "0", "0", "0", "-e", "L2M", "0x37E", "0", "0", "0", "--duration", "0.1"});
  if (r.exit_code == 0) GTEST_SKIP() << "this machine has hardware counters";
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(r.out, "") << "no zeros printed";
  EXPECT_NE(r.err.find("tally: error: event 0 (CYC): event 'cycles' is not supported on this "
                       "machine"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("tally: error: event 2 (L2M): event '0x37E' is not supported on this "
                       "machine"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("CLK"), std::string::npos) << r.err;
}

TEST(StatCli, UsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"-e", "X", "task-clock", "1", "1", "0"}, "both set: nothing would be counted"},
      {{"-e", "X", "task-clock:u", "0", "1", "0"}, "both set: nothing would be counted"},
      {{"-e", "X", "task-clock", "0", "2", "0"}, "0 or 1"},
      {{"-e", "X", "task-clock", "0", "0", "yes"}, "0 or 1"},
      {{"-e", "X", "cycels", "0", "0", "0"}, "event 0 (X): event 'cycels': unknown event"},
      {{"-e", "X", "0xZZ", "0", "0", "0"}, "0xz0000yyzz"},
      {{"-e", "X", "task-clock", "0", "0", "0", "-C", "4095"}, "CPU 4095 is not online"},
      {{"-e", "X", "task-clock", "0", "0", "0", "-C", "1-0"}, "goes backwards"},
      {{"-e", "X", "task-clock", "0", "0", "0", "--command-only"}, "needs a command"},
      {{"-e", "X", "task-clock", "0", "0", "0", "-I", "0"}, "--interval"},
      {{"-e", "X", "task-clock", "0", "0", "0", "--json", "-x", ","}, "excludes"},
      {{}, "-e"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"stat"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = run_tally(args);
    EXPECT_EQ(r.exit_code, 2) << c.message << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find('\t'), std::string::npos);
  }
}

// The first CPU of each NUMA node, as sysfs lists them.
std::vector<int> first_cpus_of_nodes() {
  std::vector<int> online = collect::online_cpus();
  std::vector<int> firsts;
  for (const auto& node : collect::numa_nodes(online)) firsts.push_back(node.cpus.front());
  return firsts;
}

TEST(StatCli, PerNodeEventsOnTheFirstCpuOfEachNode) {
  auto r = run_tally({"stat", "-e", "CLK", "cpu-clock", "0", "0", "0", "-e", "NODE",
                      "cpu-clock", "0", "0", "1", "-I", "50", "--duration", "0.15"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<int, std::vector<int>> cores_by_event;
  for (const Line& line : parse_trace(r.out)) {
    auto& cores = cores_by_event[line.event];
    if (std::find(cores.begin(), cores.end(), line.core) == cores.end()) cores.push_back(line.core);
  }
  EXPECT_EQ(cores_by_event[0], collect::online_cpus());
  EXPECT_EQ(cores_by_event[1], first_cpus_of_nodes());
}

TEST(StatCli, SummaryJsonAndSeparatedRows) {
  auto r = run_tally({"stat", "-e", "CLK", "task-clock", "0", "0", "0", "-e", "FLT",
                      "page-faults", "1", "0", "0", "-I", "100", "--duration", "0.3", "--summary",
                      "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  EXPECT_GE(json["intervals"].get<int>(), 3);
  const double elapsed = json["elapsed_ns"].get<double>();
  EXPECT_GE(elapsed, 0.29e9);
  ASSERT_EQ(json["events"].size(), 2u);
  const auto& clk = json["events"][0];
  EXPECT_EQ(clk["name"], "CLK");
  EXPECT_EQ(clk["exclude_kernel"], false);
  EXPECT_EQ(json["events"][1]["exclude_kernel"], true);  // EXCLUDE_KERNEL 1
  EXPECT_EQ(json["events"][1]["exclude_user"], false);
  uint64_t sum = 0;
  for (const auto& cpu : clk["cpus"]) {
    sum += cpu["total"].get<uint64_t>();
    // System-wide task-clock: each CPU's counter ran for the whole counted time.
    EXPECT_NEAR(cpu["total"].get<double>(), elapsed, 0.01 * elapsed);
  }
  EXPECT_EQ(clk["total"].get<uint64_t>(), sum);
  EXPECT_EQ(clk["cpus"].size(), collect::online_cpus().size());

  auto csv = run_tally({"stat", "-e", "CLK", "task-clock", "0", "0", "0", "-I", "100",
                        "--duration", "0.2", "--summary", "-x", ";"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::istringstream rows(csv.out);
  std::string header, row, extra;
  std::getline(rows, header);
  std::getline(rows, row);
  EXPECT_FALSE(std::getline(rows, extra));
  EXPECT_EQ(header.rfind("event;name;counter;unit;total;", 0), 0u) << header;
  EXPECT_EQ(std::count(row.begin(), row.end(), ';'), 12) << row;
  EXPECT_EQ(row.rfind("0;CLK;task-clock;ns;", 0), 0u) << row;

  auto table = run_tally({"stat", "-e", "CLK", "task-clock", "0", "0", "0", "-I", "100",
                          "--duration", "0.2", "--summary"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("per second"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("CLK"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find('\t'), std::string::npos) << "no trace lines with --summary";
}

TEST(StatCli, JsonTraceLines) {
  auto r = run_tally({"stat", "-e", "CLK", "cpu-clock", "0", "0", "0", "-I", "50", "--duration",
                      "0.1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream stream(r.out);
  std::string text;
  size_t count = 0;
  while (std::getline(stream, text)) {
    auto object = nlohmann::json::parse(text);
    EXPECT_EQ(object["name"], "CLK");
    EXPECT_GE(object["interval"].get<int>(), 1);
    EXPECT_TRUE(object.contains("timestamp") && object.contains("increase") &&
                object.contains("core") && object.contains("running"));
    ++count;
  }
  EXPECT_GE(count, collect::online_cpus().size());
}

TEST(StatCli, SigintEndsWithALastCompleteInterval) {
  const size_t ncpus = collect::online_cpus().size();
  // SIGINT 0.3 s after the first trace line: a tally slow to start on a loaded machine is
  // not interrupted before it counts.
  const RunOptions sigint_once_counting{
      .signal_after_seconds = 0.3, .signal = SIGINT, .signal_after_output = "\n"};
  // Without a command: SIGINT stops counting, exit 0.
  auto r = run_tally({"stat", "-e", "CLK", "cpu-clock", "0", "0", "0", "-I", "100"},
                     sigint_once_counting);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto intervals = by_interval(parse_trace(r.out));
  ASSERT_GE(intervals.size(), 2u);
  for (const auto& [number, group] : intervals) EXPECT_EQ(group.size(), ncpus) << number;
  // With a command: SIGINT sent to tally alone is passed on to the command, whose status
  // (killed by SIGINT: 128 + 2) is tally's.
  auto with_command = run_tally({"stat", "-e", "CLK", "cpu-clock", "0", "0", "0", "-I", "100",
                                 "--", "sleep", "30"},
                                sigint_once_counting);
  EXPECT_EQ(with_command.exit_code, 130) << with_command.err;
  auto command_intervals = by_interval(parse_trace(with_command.out));
  ASSERT_GE(command_intervals.size(), 2u);
  for (const auto& [number, group] : command_intervals) EXPECT_EQ(group.size(), ncpus) << number;
}

TEST(StatCli, CommandExitStatusAndFailures) {
  auto failed = run_tally({"stat", "-e", "CLK", "cpu-clock", "0", "0", "0", "--", "sh", "-c",
                           "exit 3"});
  EXPECT_EQ(failed.exit_code, 3) << failed.err;
  EXPECT_FALSE(parse_trace(failed.out).empty()) << "the last interval is printed";
  auto missing = run_tally({"stat", "-e", "CLK", "cpu-clock", "0", "0", "0", "--",
                            "/nonexistent/command"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("cannot run '/nonexistent/command': No such file or directory"),
            std::string::npos)
      << missing.err;
  EXPECT_EQ(missing.out, "");
}

TEST(StatCli, UnwritableOutputIsAnIoError) {
  auto r = run({"sh", "-c",
                tally_binary() + " stat -e CLK cpu-clock 0 0 0 -I 20 --duration 0.1 >/dev/full"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("tally: error: <stdout>: cannot write: No space left on device"),
            std::string::npos)
      << r.err;
}

// The names in `dir`, hidden ones included, sorted.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// -o: the command's output alone on stdout, the trace alone in the file.
TEST(StatCli, OutputFileHoldsTheTraceAndStdoutTheCommandsOwnLines) {
  TempDir dir;
  const std::string trace = dir.file("trace");
  auto r = run_tally({"stat", "-e", "TC", "task-clock", "0", "0", "0", "-I", "100", "-o", trace,
                      "--", "sh", "-c",
                      "for i in 1 2 3 4 5; do echo \"child line $i\"; sleep 0.1; done"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "child line 1\nchild line 2\nchild line 3\nchild line 4\nchild line 5\n");
  const std::string text = read_text(trace);
  EXPECT_EQ(text.find("child"), std::string::npos) << text;
  std::istringstream stream(text);
  size_t count = 0;
  for (std::string line; std::getline(stream, line); ++count)
    EXPECT_EQ(std::count(line.begin(), line.end(), '\t'), 5) << "not 6 fields: " << line;
  // Each line also parsed field by field: 0.5 s of command is at least 4 intervals.
  auto intervals = by_interval(parse_trace(text));
  EXPECT_GE(intervals.size(), 4u);
  EXPECT_EQ(count, intervals.size() * collect::online_cpus().size());
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"trace"}) << "a temporary file is left";
}

// While tally stat runs, each interval goes to ".trace.tmp.XXXXXX" beside the file; the
// file appears, complete, when SIGINT ends the run. The command itself looks at the
// directory and the temporary file half-way, and says what it saw on stdout.
TEST(StatCli, OutputFileAppearsWholeWhenTheRunEnds) {
  TempDir dir;
  const std::string trace = dir.file("trace");
  write_bytes(trace, "an older trace\n");
  const std::string look = "sleep 0.55; cd '" + dir.path() +
                           "'; ls -a; echo '--'; cat .trace.tmp.*; echo '--'; cat trace; "
                           "echo looked; exec sleep 30";
  const RunOptions sigint_once_looked{
      .signal_after_seconds = 0.2, .signal = SIGINT, .signal_after_output = "looked\n"};
  auto r = run_tally({"stat", "-e", "TC", "task-clock", "0", "0", "0", "-I", "100", "-o", trace,
                      "--", "sh", "-c", look},
                     sigint_once_looked);
  EXPECT_EQ(r.exit_code, 130) << r.err;  // the command's status: killed by the SIGINT
  std::istringstream seen(r.out);
  std::vector<std::string> listed;
  std::string line, partial, old;
  while (std::getline(seen, line) && line != "--") listed.push_back(line);
  while (std::getline(seen, line) && line != "--") partial += line + "\n";
  while (std::getline(seen, line) && line != "looked") old += line + "\n";
  std::sort(listed.begin(), listed.end());  // ls's order depends on the locale
  ASSERT_EQ(listed.size(), 4u) << r.out;     // ., .., the temporary file, the old trace
  EXPECT_TRUE(listed[2].starts_with(".trace.tmp.")) << listed[2];
  EXPECT_EQ(listed[3], "trace");
  EXPECT_EQ(old, "an older trace\n") << "the file is replaced only at the end";
  // After 0.55 s of 100 ms intervals, about five intervals are in the temporary file
  // (at least two on a loaded machine).
  EXPECT_GE(by_interval(parse_trace(partial)).size(), 2u) << partial;

  const std::string text = read_text(trace);
  EXPECT_TRUE(text.starts_with(partial)) << "the trace goes on from what was written";
  EXPECT_GT(by_interval(parse_trace(text)).size(), by_interval(parse_trace(partial)).size());
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"trace"});
}

TEST(StatCli, AFailedRunLeavesTheOutputFileAlone) {
  TempDir dir;
  const std::string trace = dir.file("trace");
  write_bytes(trace, "an older trace\n");
  auto missing = run_tally({"stat", "-e", "CLK", "cpu-clock", "0", "0", "0", "-o", trace, "--",
                            "/nonexistent/command"});
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  EXPECT_NE(missing.err.find("cannot run '/nonexistent/command'"), std::string::npos)
      << missing.err;
  EXPECT_EQ(read_text(trace), "an older trace\n");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"trace"});

  // An output that cannot be written is said before the command runs.
  const std::string nowhere = dir.file("no-such-dir/trace");
  auto unwritable = run_tally({"stat", "-e", "CLK", "cpu-clock", "0", "0", "0", "-o", nowhere,
                               "--", "sh", "-c", "echo ran"});
  EXPECT_EQ(unwritable.exit_code, 3) << unwritable.err;
  EXPECT_NE(unwritable.err.find(nowhere + ": cannot create temporary file"), std::string::npos)
      << unwritable.err;
  EXPECT_EQ(unwritable.out, "");
}

TEST(StatCli, SummaryJsonToAnOutputFile) {
  TempDir dir;
  auto r = run_tally({"stat", "-e", "CLK", "task-clock", "0", "0", "0", "-I", "100", "--duration",
                      "0.2", "--summary", "--json", "-o", dir.file("summary.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  auto json = nlohmann::json::parse(read_text(dir.file("summary.json")));
  EXPECT_EQ(json["events"][0]["name"], "CLK");
  EXPECT_GE(json["intervals"].get<int>(), 2);
}

TEST(StatCli, Help) {
  auto r = run_tally({"stat", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("EXCLUDE_KERNEL"), std::string::npos);
  EXPECT_NE(r.out.find("--summary"), std::string::npos);
  EXPECT_NE(r.out.find("-o,--output FILE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".FILE.tmp.XXXXXX"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tally::test
