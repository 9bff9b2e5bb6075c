// --label-focus / --label-ignore (pprof's -tagfocus / -tagignore) on a perf script written
// here, whose samples are known one by one: the totals are counted by hand from the
// script, and the same filters on the script converted to profile.proto give the rows
// google/pprof gives with -tagfocus / -tagignore.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/test_support.h"

namespace tally::test {
namespace {

struct Run {
  std::string comm;
  int pid, tid, cpu;
  std::string function;
  int samples;  // 1 ms each
};

// 14 samples: alpha (pid 100, threads 100 on cpu 0 and 101 on cpu 1), beta (pid 200 on cpu 2).
const std::vector<Run> kRuns = {
    {"alpha", 100, 100, 0, "func_a", 5},
    {"alpha", 100, 101, 1, "func_b", 3},
    {"beta", 200, 200, 2, "func_a", 2},
    {"beta", 200, 200, 2, "func_c", 4},
};

std::string perf_script() {
  std::ostringstream out;
  int n = 0;
  for (const Run& r : kRuns)
    for (int i = 0; i < r.samples; ++i, ++n) {
      char cpu[8];
      std::snprintf(cpu, sizeof cpu, "%03d", r.cpu);
      out << r.comm << " " << r.pid << "/" << r.tid << " [" << cpu << "] 1." << 100 + n
          << ":    1000000 cpu-clock: \n"
          << "\t            1674 " << r.function << "+0x4 (/nonexistent/app)\n"
          << "\t            153c main+0x3dc (/nonexistent/app)\n\n";
    }
  return out.str();
}

class LabelFilter : public ::testing::Test {
 protected:
  void SetUp() override {
    script_ = dir_.file("labels.perf-script.txt");
    write_bytes(script_, perf_script());
    proto_ = dir_.file("labels.pb.gz");
    RunResult r = run_tally({"convert", script_, "--to", "pprof", "-o", proto_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // flat ms per function of `tally top ARGS FILE`, "" rows skipped.
  std::map<std::string, std::string> flat_of(std::vector<std::string> args, const std::string& file) {
    args.insert(args.begin(), "top");
    args.push_back(file);
    RunResult r = run_tally(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::string> flat;
    for (const TopRow& row : top_rows(r.out))
      if (row.flat != "0") flat[row.name] = row.flat;
    return flat;
  }
  TempDir dir_;
  std::string script_, proto_;
};

using Flat = std::map<std::string, std::string>;

TEST_F(LabelFilter, KeepsTheSamplesCountedByHand) {
  EXPECT_EQ(flat_of({"--label-focus", "pid=100"}, script_), (Flat{{"func_a", "5ms"}, {"func_b", "3ms"}}));
  EXPECT_EQ(flat_of({"--label-focus", "cpu=0"}, script_), (Flat{{"func_a", "5ms"}}));
  EXPECT_EQ(flat_of({"--label-focus", "cpu=1:2"}, script_),
            (Flat{{"func_a", "2ms"}, {"func_b", "3ms"}, {"func_c", "4ms"}}));
  EXPECT_EQ(flat_of({"--label-focus", "tid=101:"}, script_),
            (Flat{{"func_a", "2ms"}, {"func_b", "3ms"}, {"func_c", "4ms"}}));
  EXPECT_EQ(flat_of({"--label-focus", "comm=^be"}, script_), (Flat{{"func_a", "2ms"}, {"func_c", "4ms"}}));
  EXPECT_EQ(flat_of({"--label-ignore", "comm=alpha"}, script_), (Flat{{"func_a", "2ms"}, {"func_c", "4ms"}}));
  // Two focus filters must both match; an ignore filter then drops.
  EXPECT_EQ(flat_of({"--label-focus", "pid=100", "--label-focus", "comm=alp", "--label-ignore", "tid=101"},
                    script_),
            (Flat{{"func_a", "5ms"}}));
  EXPECT_EQ(flat_of({"--label-focus", "pid=100", "--label-focus", "comm=beta"}, script_), Flat{});
  // A regex is not matched against numbers, as in pprof.
  EXPECT_EQ(flat_of({"--label-focus", "pid=1.0"}, script_), Flat{});
}

TEST_F(LabelFilter, FiltersEveryReport) {
  // traces: one trace per distinct stack and label set kept.
  RunResult traces = run_tally({"traces", "--label-focus", "pid=200", script_});
  ASSERT_EQ(traces.exit_code, 0) << traces.err;
  EXPECT_NE(traces.out.find("func_c"), std::string::npos);
  EXPECT_EQ(traces.out.find("func_b"), std::string::npos);
  // peek: main's callees under the filter.
  RunResult peek = run_tally({"peek", "--label-focus", "comm=beta", "^main$", script_});
  ASSERT_EQ(peek.exit_code, 0) << peek.err;
  EXPECT_NE(peek.out.find("func_c"), std::string::npos);
  EXPECT_EQ(peek.out.find("func_b"), std::string::npos);
  // flame: the folded-like totals of the SVG are not parsed; the report runs and names only kept functions.
  RunResult flame = run_tally({"flame", "--label-ignore", "pid=200", "-o", dir_.file("f.svg"), script_});
  ASSERT_EQ(flame.exit_code, 0) << flame.err;
  const std::string svg = read_text(dir_.file("f.svg"));
  EXPECT_NE(svg.find("func_b"), std::string::npos);
  EXPECT_EQ(svg.find("func_c"), std::string::npos);
}

TEST_F(LabelFilter, WarnsWhenAFilterMatchesNoSample) {
  RunResult r = run_tally({"top", "--label-focus", "comm=gamma", script_});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("--label-focus comm=gamma matched no sample"), std::string::npos) << r.err;
}

TEST_F(LabelFilter, RefusesABadFilterWithItsReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pid", "expected KEY=VALUE"},
      {"=5", "KEY before '=' is empty"},
      {"pid=", "VALUE after '=' is empty"},
      {"pid=5:1", "first number is above its last"},
      {"request=1kb", "units are not supported"},
      {"pid=99999999999999999999", "out of range"},
      {"comm=(", "invalid label filter 'comm=('"},
  };
  for (const auto& [filter, why] : cases) {
    RunResult r = run_tally({"top", "--label-focus", filter, script_});
    EXPECT_NE(r.exit_code, 0) << filter;
    EXPECT_NE(r.err.find(why), std::string::npos) << filter << ": " << r.err;
  }
}

// The same rows as google/pprof's -tagfocus / -tagignore on the same profile.proto file.
// (pprof drops a numeric label whose value is 0 when it reads a file, so cpu 0 is left out.)
TEST_F(LabelFilter, GivesPprofsRowsForTagfocusAndTagignore) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"focus", "pid=100"},   {"focus", "tid=100:101"}, {"focus", "tid=101:"},
      {"focus", "pid=:150"},  {"focus", "cpu=2"},       {"focus", "comm=bet"},
      {"focus", "comm=^a,^b"}, {"ignore", "pid=100"},   {"ignore", "comm=alpha"},
      {"ignore", "cpu=1:2"},
  };
  for (const auto& [kind, filter] : cases) {
    RunResult theirs = run({pprof, "-top", "-tag" + kind + "=" + filter, proto_});
    ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
    RunResult ours = run_tally({"top", "--label-" + kind, filter, proto_});
    ASSERT_EQ(ours.exit_code, 0) << ours.err;
    EXPECT_EQ(top_rows(ours.out), top_rows(theirs.out)) << kind << " " << filter;
    EXPECT_FALSE(top_rows(ours.out).empty()) << kind << " " << filter;
  }
}

}  // namespace
}  // namespace tally::test
