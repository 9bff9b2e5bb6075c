// What a run of the real `perf record` that did not succeed means for a test: a crash
// (perf killed by a signal, 128+N from a wrapper shell, or glibc's / an assertion's abort
// message on stderr) is perf's bug or the machine's and must fail the test with perf's
// stderr; a refusal (perf_event_paranoid, no permission) is a developer machine's setting,
// which the tests skip (and CI, TALLY_REQUIRE_PEERS=1, fails).
#pragma once

#include <signal.h>
#include <string.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "support/test_support.h"

namespace tally::test {

enum class PerfRunKind { ran, crashed, refused, failed };

struct PerfRunVerdict {
  PerfRunKind kind = PerfRunKind::ran;
  std::string why;  // for the failure or skip message, with perf's stderr
};

inline bool perf_stderr_says(const std::string& err, std::initializer_list<std::string_view> marks) {
  for (std::string_view mark : marks)
    if (err.find(mark) != std::string::npos) return true;
  return false;
}

// 128+N for a signal N that a crash sends (as a shell, Debian's perf wrapper too, reports
// it). Not any code above 128: perf itself exits with -errno & 0xff (255 for -EPERM, 161
// for -EOPNOTSUPP), none of which is one of these.
inline bool exit_means_crash_signal(int exit_code) {
  for (int crash_signal : {SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGKILL, SIGSEGV})
    if (exit_code == 128 + crash_signal) return true;
  return false;
}

inline PerfRunVerdict judge_perf_run(const RunResult& r) {
  const std::string err = r.err.size() > 2000 ? r.err.substr(0, 2000) + "..." : r.err;
  if (r.signal != 0)
    return {PerfRunKind::crashed, "perf crashed: killed by signal " + std::to_string(r.signal) +
                                      " (" + ::strsignal(r.signal) + "); its stderr:\n" + err};
  if (r.timed_out) return {PerfRunKind::crashed, "perf never finished; its stderr:\n" + err};
  if (exit_means_crash_signal(r.exit_code))
    return {PerfRunKind::crashed, "perf crashed: exit " + std::to_string(r.exit_code) +
                                      " (signal " + std::to_string(r.exit_code - 128) +
                                      "); its stderr:\n" + err};
  if (r.exit_code == 0) return {PerfRunKind::ran, ""};
  if (perf_stderr_says(r.err, {"stack smashing detected", "Assertion `", "assertion failed",
                               "Segmentation fault", "core dumped", "double free or corruption",
                               "malloc(): ", "free(): invalid"}))
    return {PerfRunKind::crashed,
            "perf crashed (exit " + std::to_string(r.exit_code) + "); its stderr:\n" + err};
  if (perf_stderr_says(r.err, {"perf_event_paranoid", "Permission denied", "Access to performance "
                               "monitoring", "No permission", "not permitted"}))
    return {PerfRunKind::refused, "perf record is refused here: " + err};
  return {PerfRunKind::failed, "perf record failed (exit " + std::to_string(r.exit_code) +
                                   ", neither a crash nor a refusal): " + err};
}

}  // namespace tally::test
