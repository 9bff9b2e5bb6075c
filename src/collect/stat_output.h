// What tally stat prints. By default miniprof's trace, one line per counter and interval:
//   EVENT <TAB> CORE <TAB> TIMESTAMP <TAB> INCREASE <TAB> RUNNING <TAB> INTERVAL
// with RUNNING the fraction time_running / time_enabled of the interval printed as miniprof
// prints it ("%.3f", 1.000 when never multiplexed). `-x SEP` changes the separator,
// `--json` prints each line as a JSON object (JSON Lines), and `--summary` prints instead
// one table at the end (or one JSON document).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collect/stat_session.h"
#include "core/error.h"
#include "io/output.h"

namespace tally::collect {

std::string format_trace_line(const TraceLine& line, std::string_view separator = "\t");
std::string format_trace_json(const TraceLine& line, const CounterRequest& request);

// Totals per event and per CPU over the whole run.
class StatSummary {
 public:
  struct CpuTotal {
    int cpu = 0;
    uint64_t value = 0;
    uint64_t enabled_ns = 0;
    uint64_t running_ns = 0;
    // value * enabled / running: the estimate perf prints for a multiplexed counter.
    double scaled() const;
  };
  struct EventTotal {
    uint64_t total = 0;   // the sum of every printed increase
    double scaled = 0;    // the sum of the CPUs' scaled totals
    uint64_t enabled_ns = 0, running_ns = 0;
    std::vector<CpuTotal> cpus;  // by CPU
  };

  explicit StatSummary(size_t events) : events_(events) {}
  void add(const std::vector<TraceLine>& lines);
  const std::vector<EventTotal>& events() const { return events_; }

 private:
  std::vector<EventTotal> events_;
};

struct StatPrintOptions {
  bool summary = false;
  bool json = false;
  std::string separator;  // -x: "" is miniprof's tab (and the readable summary table)
};

// The three summary layouts: a readable table, SEP-separated rows with a header, JSON.
std::string format_summary_table(const StatSummary& summary,
                                 const std::vector<CounterRequest>& requests,
                                 const StatOutcome& outcome, const StatOptions& options);
std::string format_summary_separated(const StatSummary& summary,
                                     const std::vector<CounterRequest>& requests,
                                     const StatOutcome& outcome, std::string_view separator);
std::string format_summary_json(const StatSummary& summary,
                                const std::vector<CounterRequest>& requests,
                                const StatOutcome& outcome, const StatOptions& options);

// The sink run_stat writes to: the trace (or JSON lines) as each interval ends, written at
// once so that a pipe (or a look at -o's temporary file) sees it; the summary at the end.
class StatPrinter : public StatSink {
 public:
  StatPrinter(const std::vector<CounterRequest>& requests, StatPrintOptions options,
              io::AtomicFileWriter& out);
  bool interval(const std::vector<TraceLine>& lines) override;
  // Prints the summary when asked for; false when the output could not be written.
  bool finish(const StatOutcome& outcome, const StatOptions& options);
  // The errno of the first failed write (EPIPE: the reader went away), 0 if none.
  int write_error() const { return out_.error_number(); }
  // What the first failed write said ("FILE: cannot write: ..."), when one failed.
  const std::optional<core::Error>& write_failure() const { return write_failure_; }
  const StatSummary& summary() const { return summary_; }

 private:
  const std::vector<CounterRequest>& requests_;
  StatPrintOptions options_;
  io::AtomicFileWriter& out_;
  StatSummary summary_;
  std::string buffer_;
  std::optional<core::Error> write_failure_;
  bool write(const std::string& text);
};

}  // namespace tally::collect
