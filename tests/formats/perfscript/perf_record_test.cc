// The real thing: `perf record`, `perf script`, and tally's import of that text. The
// fixture split (func_a/b/c/d frameless leaves, see ../shared/fixtures/README.md) shows
// what each call-graph mode finds; tests/programs/measured_split, which measures the CPU
// time each function took, is the truth the leaf shares are held to (on a shared machine
// an iteration's time changes during a run, so the split of iterations is not the truth).
// perf missing or refused skips on a developer's machine and fails under CI
// (TALLY_REQUIRE_PEERS=1), which installs perf and runs as root; a perf that crashes
// (a signal, an abort message) fails everywhere, with its stderr.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "perf_script_view.h"
#include "support/measured_split.h"
#include "support/perf_run_verdict.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

std::string paranoid_level() {
  std::string level = read_text("/proc/sys/kernel/perf_event_paranoid");
  while (!level.empty() && (level.back() == '\n' || level.back() == ' ')) level.pop_back();
  return level;
}

struct Recorded {
  std::string script;          // perf script's text ("" after a test failure)
  std::string command_output;  // what the command printed (perf record passes it through)
};

// Records `command` at 999 Hz of cpu-clock with the given call-graph options.
Recorded record(const TempDir& dir, const std::vector<std::string>& call_graph,
                const std::vector<std::string>& command) {
  const std::string perf = find_program("perf");
  const std::string data = dir.file("perf.data");
  std::vector<std::string> argv = {perf, "record", "-e", "cpu-clock", "-F", "999"};
  argv.insert(argv.end(), call_graph.begin(), call_graph.end());
  argv.insert(argv.end(), {"-o", data, "--"});
  argv.insert(argv.end(), command.begin(), command.end());
  RunResult record = run(argv);
  if (const PerfRunVerdict verdict = judge_perf_run(record); verdict.kind != PerfRunKind::ran) {
    ADD_FAILURE() << verdict.why;
    return {};
  }
  RunResult script = run({perf, "script", "-i", data});
  EXPECT_EQ(script.exit_code, 0) << script.err;
  return {script.out, record.out};
}

// The fixture split, 20 rounds: about 0.22 s.
std::string record_split(const TempDir& dir, const std::vector<std::string>& call_graph) {
  return record(dir, call_graph, {shared("fixtures/bin/split"), "-r", "20"}).script;
}

// perf record of /bin/true: ran, crashed (a test failure), refused or failed otherwise.
PerfRunVerdict probe_perf_record() {
  TempDir dir;
  PerfRunVerdict verdict = judge_perf_run(run({find_program("perf"), "record", "-e", "cpu-clock",
                                               "-o", dir.file("probe.data"), "--", "/bin/true"}));
  if (verdict.kind == PerfRunKind::refused)
    verdict.why = "(perf_event_paranoid = " + paranoid_level() + ") " + verdict.why;
  return verdict;
}

// A crashed perf fails the test with its stderr; refused or not working here, it skips
// (fails under CI).
#define REQUIRE_PERF_RECORD()                                                   \
  do {                                                                          \
    TALLY_REQUIRE_PEER(find_program("perf"), "perf");                           \
    const PerfRunVerdict verdict = probe_perf_record();                         \
    if (verdict.kind == PerfRunKind::crashed) FAIL() << verdict.why;            \
    if (verdict.kind != PerfRunKind::ran) TALLY_SKIP_OR_FAIL_IN_CI(verdict.why); \
  } while (0)

// How a run that did not succeed is told apart, on stand-ins for perf run by sh: a signal,
// a wrapper's 128+N and an abort message are crashes; perf's own -EPERM exit (255) with the
// paranoid message is a refusal; another failure is neither.
TEST(PerfRunVerdict, CrashesAreNotRefusals) {
  const std::string sh = find_program("sh");
  auto judged = [&](const std::string& script) {
    return judge_perf_run(run({sh, "-c", "ulimit -c 0; " + script}));  // no core files
  };
  const PerfRunVerdict segv = judged("echo partial >&2; kill -SEGV $$");
  EXPECT_EQ(segv.kind, PerfRunKind::crashed) << segv.why;
  EXPECT_NE(segv.why.find("signal 11"), std::string::npos) << segv.why;
  EXPECT_NE(segv.why.find("partial"), std::string::npos) << "perf's stderr: " << segv.why;
  const PerfRunVerdict wrapped = judged("sh -c 'kill -ABRT $$'; exit $?");
  EXPECT_EQ(wrapped.kind, PerfRunKind::crashed) << wrapped.why;
  const PerfRunVerdict smashed =
      judged("echo '*** stack smashing detected ***: terminated' >&2; exit 1");
  EXPECT_EQ(smashed.kind, PerfRunKind::crashed) << smashed.why;
  EXPECT_NE(smashed.why.find("stack smashing"), std::string::npos) << smashed.why;
  const PerfRunVerdict refused = judged(
      "echo 'Error: Access to performance monitoring and observability operations is limited.' >&2;"
      "echo 'perf_event_paranoid setting is 4' >&2; exit 255");
  EXPECT_EQ(refused.kind, PerfRunKind::refused) << refused.why;
  EXPECT_NE(refused.why.find("perf_event_paranoid setting is 4"), std::string::npos) << refused.why;
  const PerfRunVerdict other = judged("echo 'Error: no such event' >&2; exit 161");
  EXPECT_EQ(other.kind, PerfRunKind::failed) << other.why;
  EXPECT_EQ(judged("exit 0").kind, PerfRunKind::ran);
}

// Leaf shares in percent of the samples whose leaf is one of func_a..d.
std::map<std::string, double> split_shares(const core::Profile& p) {
  auto totals = leaf_totals(p, 0);
  double sum = 0;
  for (const char* f : {"func_a", "func_b", "func_c", "func_d"}) sum += static_cast<double>(totals[f]);
  std::map<std::string, double> shares;
  for (const char* f : {"func_a", "func_b", "func_c", "func_d"})
    shares[f] = sum > 0 ? 100.0 * static_cast<double>(totals[f]) / sum : 0;
  return shares;
}

// What perf script gave is a cpu-clock profile with samples in every burner.
void expect_cpu_clock_samples(const core::Profile& p) {
  // -F 999 for about 0.22 s: about 200 samples.
  EXPECT_GT(p.total(0), 100);
  EXPECT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[1].type), "cpu-clock");
  EXPECT_EQ(p.str(p.sample_types[1].unit), "nanoseconds");
  auto totals = leaf_totals(p, 0);
  for (const char* f : {"func_a", "func_b", "func_c", "func_d"}) EXPECT_GT(totals[f], 0) << f;
}

// The callers of func_a..d in every sample where they are the leaf.
std::set<std::string> callers_of_burners(const core::Profile& p) {
  std::set<std::string> callers;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    auto frames = frame_names(p, i);
    if (frames.size() >= 2 && frames[0].starts_with("func_")) callers.insert(frames[1]);
  }
  return callers;
}

// The leaf shares against the CPU time measured_split measured in each function, within 3
// percentage points: about a second at 999 Hz, 1000 samples (perf report put each within
// 0.3 points of it here).
TEST(PerfRecord, LeafSharesAreTheMeasuredSplit) {
  REQUIRE_PERF_RECORD();
  TempDir dir;
  const Recorded recorded =
      record(dir, {"-g"}, {measured_split_program(), "-r", "7", "-u", "12000000"});
  ASSERT_FALSE(recorded.script.empty());
  const std::map<std::string, double> truth = measured_split_shares(recorded.command_output);
  ASSERT_EQ(truth.size(), 4u);
  core::Diagnostics diagnostics;
  auto p = read_perf_script_text(recorded.script, diagnostics, "perf script");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_GT(p->total(0), 500);
  const std::map<std::string, double> shares = split_shares(*p);
  for (const auto& [function, percent] : truth)
    EXPECT_NEAR(shares.at(function), percent, 3) << function << " (measured " << percent << "%)";
}

TEST(PerfRecord, FramePointerCallGraph) {
  REQUIRE_PERF_RECORD();
  TempDir dir;
  const std::string text = record_split(dir, {"-g"});
  ASSERT_FALSE(text.empty());
  core::Diagnostics diagnostics;
  auto p = read_perf_script_text(text, diagnostics, "perf script");
  ASSERT_TRUE(p) << p.error().message;
  expect_cpu_clock_samples(*p);
  // func_a..d are frameless leaves (g++ 12 emits no push %rbp for them even with
  // -fno-omit-frame-pointer): the frame-pointer walk skips run_rounds and names main as
  // their caller, as perf report does for split-fp.perf-script.txt.
  EXPECT_EQ(callers_of_burners(*p), std::set<std::string>{"main"});
}

TEST(PerfRecord, DwarfCallGraphFindsRunRounds) {
  REQUIRE_PERF_RECORD();
  TempDir dir;
  const std::string text = record_split(dir, {"--call-graph", "dwarf"});
  ASSERT_FALSE(text.empty());
  core::Diagnostics diagnostics;
  auto p = read_perf_script_text(text, diagnostics, "perf script");
  ASSERT_TRUE(p) << p.error().message;
  expect_cpu_clock_samples(*p);
  // The DWARF unwinder sees through the frameless leaves: run_rounds is their caller.
  EXPECT_EQ(callers_of_burners(*p), std::set<std::string>{"run_rounds"});
  for (size_t i = 0; i < p->sample_count(); ++i) {
    auto frames = frame_names(*p, i);
    if (frames.size() >= 3 && frames[0].starts_with("func_")) {
      EXPECT_EQ(frames[2], "main");
    }
  }
}

}  // namespace
}  // namespace tally::test
