// `tally stat`: per-core counter tracing with miniprof's command line and output
// (../shared/specs/miniprof-README.txt), on perf_event_open instead of AMD's MSRs.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.h"
#include "collect/cpu_topology.h"
#include "collect/event_spec.h"
#include "collect/stat_output.h"
#include "collect/stat_session.h"
#include "io/output.h"

namespace tally::cli {
namespace {

struct StatCommandOptions {
  std::vector<std::vector<std::string>> events;  // -e NAME COUNTER EXCL_K EXCL_U PER_NODE
  uint64_t interval_ms = 1000;
  std::string cpu_list;
  double duration_s = 0;
  bool command_only = false;
  std::string clock;
  bool summary = false;
  bool json = false;
  std::string separator;
  std::string output = "-";
  std::vector<std::string> command;
};

// Each line of a multi-line error (one per event that failed to open) as its own message.
int report_lines(const core::Error& error) {
  core::Error line = error;
  size_t start = 0;
  while (true) {
    size_t end = error.message.find('\n', start);
    line.message = error.message.substr(start, end - start);
    if (end == std::string::npos) return report(line);
    std::fprintf(stderr, "tally: error: %s\n", line.message.c_str());
    start = end + 1;
  }
}

// A 0/1 flag of miniprof's -e.
bool parse_flag(const std::string& text, bool& value) {
  if (text != "0" && text != "1") return false;
  value = text == "1";
  return true;
}

// One -e NAME COUNTER_VALUE EXCLUDE_KERNEL EXCLUDE_USER PER_NODE, or the error exit code.
int parse_request(size_t index, const std::vector<std::string>& fields,
                  collect::CounterRequest& request) {
  if (fields.size() != 5)
    return usage_error(fmt::format(
        "-e takes 5 values, EVENT_NAME COUNTER_VALUE EXCLUDE_KERNEL EXCLUDE_USER PER_NODE "
        "(e.g. -e CLK_UNHALTED 0x76 0 0 0); event {} has {}",
        index, fields.size()));
  request.label = fields[0];
  if (request.label.empty()) return usage_error(fmt::format("event {}: empty EVENT_NAME", index));
  auto event = collect::parse_event(fields[1]);
  if (!event) {
    core::Error error = event.error();
    error.message = fmt::format("event {} ({}): {}", index, request.label, error.message);
    return error.kind == core::ErrorKind::unsupported ? report(error) : usage_error(error.message);
  }
  request.event = std::move(*event);
  bool exclude_kernel = false, exclude_user = false;
  if (!parse_flag(fields[2], exclude_kernel) || !parse_flag(fields[3], exclude_user) ||
      !parse_flag(fields[4], request.per_node))
    return usage_error(fmt::format(
        "event {} ({}): EXCLUDE_KERNEL, EXCLUDE_USER and PER_NODE are 0 or 1, not '{}' '{}' '{}'",
        index, request.label, fields[2], fields[3], fields[4]));
  // A modifier on a symbolic COUNTER_VALUE (cycles:u) adds to the flags.
  request.event.exclude_kernel = request.event.exclude_kernel || exclude_kernel;
  request.event.exclude_user = request.event.exclude_user || exclude_user;
  if (request.event.exclude_kernel && request.event.exclude_user)
    return usage_error(fmt::format(
        "event {} ({}): EXCLUDE_KERNEL and EXCLUDE_USER are both set: nothing would be "
        "counted (miniprof: \"When both are set to 1, miniprof measures nothing\")",
        index, request.label));
  return kOk;
}

int run_stat_command(const StatCommandOptions& opt) {
  collect::StatOptions options;
  for (size_t i = 0; i < opt.events.size(); ++i) {
    collect::CounterRequest request;
    if (int code = parse_request(i, opt.events[i], request); code != kOk) return code;
    options.events.push_back(std::move(request));
  }
  const std::vector<int> online = collect::online_cpus();
  if (opt.cpu_list.empty()) {
    options.cpus = online;
  } else {
    auto cpus = collect::parse_cpu_list(opt.cpu_list);
    if (!cpus) return usage_error(cpus.error().message);
    for (int cpu : *cpus) {
      if (std::find(online.begin(), online.end(), cpu) == online.end())
        return usage_error(fmt::format("-C: CPU {} is not online (online CPUs: {})", cpu,
                                       fmt::join(online, ",")));
    }
    options.cpus = std::move(*cpus);
  }
  options.nodes = collect::numa_nodes(online);
  options.interval_ms = opt.interval_ms;
  options.duration_ms = static_cast<uint64_t>(opt.duration_s * 1000.0 + 0.5);
  options.command = opt.command;
  options.command_only = opt.command_only;
  if (opt.command_only && opt.command.empty())
    return usage_error("--command-only needs a command: tally stat ... -- CMD [ARGS...]");
  if (opt.clock == "tsc") {
    if (!collect::tsc_is_reliable())
      return report(core::Error{"--clock tsc: this machine has no constant, non-stop time stamp "
                                "counter (constant_tsc, nonstop_tsc)",
                                core::ErrorKind::unsupported});
    options.clock = collect::TraceClock(collect::TraceClockKind::tsc);
  } else if (opt.clock == "monotonic") {
    options.clock = collect::TraceClock(collect::TraceClockKind::monotonic);
  }

  // Opened before anything is counted or run: an output that cannot be written is said at
  // once. A run that fails leaves FILE as it was (the writer removes its temporary file).
  auto out = io::AtomicFileWriter::open(opt.output);
  if (!out) return report(out.error());
  collect::StatPrintOptions print;
  print.summary = opt.summary;
  print.json = opt.json;
  print.separator = opt.separator;
  collect::StatPrinter printer(options.events, print, *out);
  auto outcome = collect::run_stat(options, printer);
  if (!outcome) return report_lines(outcome.error());
  if (!printer.finish(*outcome, options)) {
    // A reader that went away (| head) is no error worth a message.
    if (printer.write_error() != EPIPE) report(*printer.write_failure());
    return kIoError;
  }
  if (auto committed = out->commit(); !committed) return report(committed.error());
  return outcome->command_ran ? outcome->command_exit_code : kOk;
}

}  // namespace

void add_stat_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<StatCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "stat",
      "Per-core counter tracing, miniprof's command line and output on perf_event_open. Every "
      "interval prints one line per counted CPU and event, tab-separated: event number (from "
      "0, in -e order), core, timestamp (the CPU's time stamp counter, or CLOCK_MONOTONIC ns "
      "where it is not constant), counter increase over the interval (not scaled), fraction "
      "of the interval the counter ran (time_running / time_enabled, %.3f), logical time "
      "(interval number from 1). Counts system-wide per CPU (needs root, CAP_PERFMON or "
      "kernel.perf_event_paranoid <= 0) until SIGINT, --duration or the end of CMD. With -- CMD "
      "tally stat exits with the command's status.");
  cmd->add_option("-e,--event", opt->events,
                  "EVENT_NAME COUNTER_VALUE EXCLUDE_KERNEL EXCLUDE_USER PER_NODE (repeatable). "
                  "COUNTER_VALUE: 0xz0000yyzz (EventSelect z-zz, UnitMask yy) or an event "
                  "name: cpu-clock, task-clock, page-faults, cycles, instructions, cache-misses, "
                  "L1-dcache-load-misses, rNNNN... EXCLUDE_*: 1 to leave kernel / user mode "
                  "out. PER_NODE: 1 to count once per NUMA node, on its first CPU")
      // type_size, not expected: with expected(5) CLI11 2.1 swallows the "--" before CMD.
      ->type_size(5)
      ->allow_extra_args(false)
      ->required();
  cmd->add_option("-I,--interval", opt->interval_ms, "interval in milliseconds (default 1000)")
      ->check(CLI::Range(uint64_t{10}, uint64_t{24} * 3600 * 1000));
  cmd->add_option("-C,--cpu", opt->cpu_list, "count on these CPUs only, e.g. 0-3,8 (default: "
                                              "every online CPU)");
  cmd->add_option("--duration", opt->duration_s,
                  "stop after SECS seconds (a command still running gets SIGTERM)")
      ->check(CLI::Range(0.001, 1e9));
  cmd->add_flag("--command-only", opt->command_only,
                "with -- CMD: count only the command, its threads and children (still per CPU) "
                "instead of everything that runs on each CPU");
  cmd->add_option("--clock", opt->clock, "timestamps: tsc or monotonic (default: tsc where "
                                          "constant and non-stop, else monotonic)")
      ->check(CLI::IsMember({"tsc", "monotonic"}));
  cmd->add_flag("--summary", opt->summary,
                "print a table at the end (per event: total, scaled total, rate per second, "
                "per-CPU min and max, running) instead of the trace");
  auto* json = cmd->add_flag("--json", opt->json,
                             "JSON: one object per trace line (JSON Lines), or one document "
                             "with --summary");
  cmd->add_option("-x,--field-separator", opt->separator,
                  "separate fields with SEP instead of a tab; with --summary, SEP-separated "
                  "rows with a header instead of the table")
      ->excludes(json);
  cmd->add_option("-o,--output", opt->output,
                  "write the trace (or --summary, --json) to FILE instead of standard output, "
                  "which is left to the command. FILE appears when tally stat ends (the "
                  "command's end, --duration, SIGINT/SIGTERM/SIGHUP), complete: until then "
                  "each interval goes to .FILE.tmp.XXXXXX beside it (tail -f that to watch), "
                  "so that no reader sees a half-written trace; a run that fails leaves FILE "
                  "as it was. A device or FIFO is written in place; - is standard output")
      ->type_name("FILE");
  cmd->add_option("command", opt->command, "-- CMD [ARGS...]: count while CMD runs");
  cmd->final_callback([opt, &run] { run = [opt] { return run_stat_command(*opt); }; });
}

}  // namespace tally::cli
