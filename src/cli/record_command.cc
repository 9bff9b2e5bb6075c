// `tally record`: samples a command (-- CMD), running processes (-p) or every CPU (-a) with
// perf_event_open and writes the profile (pprof by default, tally.pb.gz).
//
// Exit status: when tally records a command, the command's own status once the profile is
// written (128 + N when a signal N ended it, as shells report it), so that `tally record
// -- make` fails when make fails; tally's codes (README) when tally itself fails (2 usage,
// 3 I/O, 4 an event or permission the machine does not allow). -p and -a: 0 on success.
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/output.h"
#include "cli/record_loop.h"
#include "cli/record_off_cpu.h"
#include "cli/record_preload.h"
#include "cli/symbolize_flags.h"
#include "collect/child_command.h"
#include "collect/default_event.h"
#include "collect/event_spec.h"
#include "collect/profile_builder.h"
#include "collect/sampler.h"
#include "collect/trace_clock.h"
#include "formats/format.h"
#include "symbolize/symbolize.h"

namespace tally::cli {

namespace {

struct RecordOptions {
  std::vector<std::string> events;
  uint64_t frequency = 999;
  uint64_t period = 0;
  std::string call_graph = "dwarf";
  std::string pids;
  bool all_cpus = false;
  double duration = 0;
  std::string output;
  std::string format = "pprof";
  std::vector<std::string> command;
  bool preload = false;
  bool off_cpu = false;
  bool no_timestamps = false;
  SymbolizeFlags symbolize;
};

// "fp", "none", "dwarf" or "dwarf,SIZE" (bytes of user stack per sample).
bool parse_call_graph(const std::string& text, collect::SamplingOptions& sampling, std::string& error) {
  if (text == "fp") sampling.call_graph = collect::CallGraphMode::fp;
  else if (text == "none") sampling.call_graph = collect::CallGraphMode::none;
  else if (text == "dwarf" || text.starts_with("dwarf,")) {
    sampling.call_graph = collect::CallGraphMode::dwarf;
    if (text.size() > 5) {
      std::string_view size = std::string_view(text).substr(6);
      uint32_t bytes = 0;
      auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), bytes);
      // The kernel copies at most 64 KiB less one word, in multiples of 8.
      if (ec != std::errc{} || end != size.data() + size.size() || bytes < 8 || bytes > 65528) {
        error = fmt::format("-g dwarf,SIZE: SIZE must be a number of bytes from 8 to 65528, not "
                            "'{}'", size);
        return false;
      }
      sampling.stack_bytes = bytes / 8 * 8;
    }
  } else {
    error = fmt::format("-g must be fp, dwarf, dwarf,SIZE or none, not '{}'", text);
    return false;
  }
  return true;
}

bool parse_pids(const std::string& text, std::vector<pid_t>& pids) {
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), pid);
    if (ec != std::errc{} || end != item.data() + item.size() || pid <= 0) return false;
    pids.push_back(pid);
  }
  return !pids.empty();
}

std::string default_output(formats::Format format) {
  switch (format) {
    case formats::Format::gperf: return "tally.prof";
    case formats::Format::callgrind: return "callgrind.out.tally";
    case formats::Format::folded: return "tally.folded";
    case formats::Format::dcpi: return "tally.dcpi/";
    default: return "tally.pb.gz";
  }
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

// What tally says at the end, on stderr and in the profile's comments: what was sampled,
// what was lost, and (for a command) the CPU time the kernel accounted to it.
std::vector<std::string> summary_lines(const core::Profile& profile,
                                       const collect::SamplerStats& stats,
                                       const collect::ProfileBuilderStats& built,
                                       const LoopResult& loop,
                                       const collect::ChildCommand* command) {
  std::vector<std::string> lines;
  std::string sampled;
  for (size_t i = 0; i < profile.sample_types.size(); ++i) {
    std::string_view type = profile.str(profile.sample_types[i].type);
    if (type == "samples") continue;
    int64_t total = profile.total(i);
    if (profile.str(profile.sample_types[i].unit) == "nanoseconds")
      sampled += fmt::format("{}{}: {:.3f} s", sampled.empty() ? "" : ", ", type, static_cast<double>(total) / 1e9);
    else sampled += fmt::format("{}{}: {}", sampled.empty() ? "" : ", ", type, total);
  }
  lines.push_back(fmt::format("recorded {} samples in {:.1f} s ({})", stats.samples, loop.seconds,
                              sampled));
  if (stats.lost || stats.lost_samples)
    lines.push_back(fmt::format("lost {} records (the ring buffers were full) and {} samples "
                                "(the kernel dropped them): the profile under-counts",
                                stats.lost, stats.lost_samples));
  if (stats.throttled)
    lines.push_back(fmt::format("the kernel throttled sampling {} times "
                                "(kernel.perf_event_max_sample_rate): fewer samples, weights "
                                "still honest",
                                stats.throttled));
  if (stats.bad_records)
    lines.push_back(fmt::format("{} records could not be decoded and were skipped", stats.bad_records));
  if (built.unwind_truncated)
    lines.push_back(fmt::format(
        "{} of {} stacks could not be unwound to their outermost frame{}", built.unwind_truncated,
        built.samples,
        built.stack_copy_full ? fmt::format(" ({} because the stack copy was too short: try "
                                            "-g dwarf,SIZE with a larger SIZE)",
                                            built.stack_copy_full)
                              : std::string()));
  if (command && command->exited()) {
    const rusage& u = command->usage();
    lines.push_back(fmt::format("the command used {:.3f} s of CPU (user {:.3f} s, system {:.3f} s, "
                                "from wait4's rusage)",
                                seconds(u.ru_utime) + seconds(u.ru_stime), seconds(u.ru_utime),
                                seconds(u.ru_stime)));
  }
  return lines;
}

// Symbolizes the profile as the flags say and writes it (atomically) in `format`. What the
// symbolizer says goes to stderr at once; in the profile's comments a binary without debug
// symbols is one name in a summary line, not its whole warning.
int write_recorded(core::Profile profile, const RecordOptions& opt, formats::Format format) {
  core::Diagnostics symbolize_notes;
  auto symbolized = apply_symbolize_flags(opt.symbolize, profile, symbolize_notes);
  print_warnings(symbolize_notes);
  if (!symbolized) return report(symbolized.error());
  const std::vector<std::string> stripped = symbolize::binaries_without_debug_symbols(symbolize_notes);
  for (const std::string& w : symbolize_notes.warnings())
    if (w.find(symbolize::kNoDebugSymbols) == std::string::npos)
      profile.comments.push_back(profile.intern("tally: " + w));
  if (!stripped.empty())
    profile.comments.push_back(profile.intern(symbolize::missing_symbols_summary(profile, stripped)));
  core::Diagnostics diagnostics;
  auto files = formats::write_profile(std::move(profile), format, diagnostics);
  print_warnings(diagnostics);
  if (!files) return report(files.error());
  const std::string output = opt.output.empty() ? default_output(format) : opt.output;
  if (int code = write_outputs(*files, output, opt.format); code != kOk) return code;
  std::fprintf(stderr, "tally: wrote %s\n", output.c_str());
  return kOk;
}

// --preload: the command profiles itself with libtally (no perf_event_open needed).
int run_preload_record(const RecordOptions& opt, formats::Format format) {
  if (opt.command.empty()) return usage_error("--preload records a command: give -- COMMAND");
  if (opt.off_cpu)
    return usage_error("--off-cpu needs perf_event_open's context switches: not with --preload");
  if (!opt.pids.empty() || opt.all_cpus || !opt.events.empty() || opt.period != 0 ||
      opt.call_graph != "dwarf")
    return usage_error("--preload samples CPU time with frame-pointer stacks: -e, -c, -g, -p and "
                       "-a do not apply");
  core::Diagnostics diagnostics;
  PreloadRecordOptions preload;
  preload.command = opt.command;
  preload.frequency = opt.frequency;
  auto result = record_with_preload(preload, diagnostics);
  print_warnings(diagnostics);
  if (!result) return report(result.error());
  core::Profile& profile = result->profile;
  std::string command_line = "tally record --preload";
  for (const auto& a : opt.command) command_line += " " + a;
  profile.comments.push_back(profile.intern(command_line));
  const double cpu = seconds(result->usage.ru_utime) + seconds(result->usage.ru_stime);
  const std::string line =
      fmt::format("recorded {} process(es) in {:.1f} s with libtally; the command used {:.3f} s "
                  "of CPU (from wait4's rusage)",
                  result->processes, result->seconds, cpu);
  profile.comments.push_back(profile.intern(line));
  std::fprintf(stderr, "tally: %s\n", line.c_str());
  if (const int status = write_recorded(std::move(profile), opt, format); status != kOk) return status;
  return result->signaled ? 128 + result->status : result->status;
}

int run_record(const RecordOptions& opt) {
  const int targets = (!opt.command.empty()) + (!opt.pids.empty()) + (opt.all_cpus ? 1 : 0);
  if (targets != 1)
    return usage_error("give exactly one target: -- COMMAND, -p PID[,PID] or -a");
  auto format = formats::parse_format_name(opt.format);
  if (!format)
    return usage_error(fmt::format("unknown output format '{}' (expected {})", opt.format,
                                   formats::writable_format_names()));
  if (opt.preload) return run_preload_record(opt, *format);

  collect::SamplerConfig config;
  for (const std::string& text : opt.events) {
    auto event = collect::parse_event(text);
    if (!event) return usage_error(event.error().message);
    config.events.push_back(*event);
  }
  config.sampling.frequency = opt.frequency;
  config.sampling.period = opt.period;
  if (opt.period == 0 && opt.frequency == 0) return usage_error("-F must be at least 1");
  if (std::string error; !parse_call_graph(opt.call_graph, config.sampling, error))
    return usage_error(error);
  std::vector<pid_t> pids;
  if (!opt.pids.empty() && !parse_pids(opt.pids, pids))
    return usage_error(fmt::format("-p takes PID[,PID...], not '{}'", opt.pids));
  if (config.events.empty() && opt.off_cpu) {
    // Wall time is on-CPU time plus off-CPU time: the on-CPU event must count time.
    config.events.push_back(*collect::parse_event("cpu-clock"));
  } else if (config.events.empty()) {
    auto chosen = collect::default_sampling_event();
    std::fprintf(stderr, "tally: %s\n", chosen.why.c_str());
    config.events.push_back(chosen.event);
  }

  std::optional<collect::ChildCommand> child;
  if (!opt.command.empty()) {
    sigset_t mask;
    sigprocmask(SIG_SETMASK, nullptr, &mask);
    auto started = collect::ChildCommand::spawn(opt.command, mask);
    if (!started) return report(started.error());
    child.emplace(std::move(*started));
    config.target = collect::TargetKind::command;
    config.pids = {child->pid()};
  } else if (!pids.empty()) {
    config.pids = pids;
    config.target = collect::TargetKind::processes;
  } else {
    config.target = collect::TargetKind::system_wide;
  }

  OffCpuSetup off_cpu;
  if (opt.off_cpu) {
    if (std::string error; !open_off_cpu_bpf(config, off_cpu, error)) return usage_error(error);
    if (std::string error; !add_off_cpu_events(config, off_cpu, error)) return usage_error(error);
  }
  auto sampler = collect::Sampler::open(config);
  if (opt.off_cpu) sampler = off_cpu_fallback_if_needed(config, off_cpu, std::move(sampler));
  if (!sampler) {
    const int code = report(sampler.error());
    if (child && code == kUnsupported)
      std::fprintf(stderr, "tally: hint: `tally record --preload -- COMMAND` profiles the command "
                           "from inside (libtally) without perf_event_open\n");
    return code;
  }
  const bool kernel_sampled = !(*sampler)->attr(0).exclude_kernel;
  if (!(*sampler)->kernel_excluded().empty())
    std::fprintf(stderr, "tally: note: kernel frames are not recorded: %s\n",
                 (*sampler)->kernel_excluded().c_str());

  collect::ProfileBuilderOptions build{.events = config.events,
                                       .call_graph = config.sampling.call_graph,
                                       .kernel_frames = kernel_sampled,
                                       .main_pid = config.pids.empty() ? -1 : config.pids[0],
                                       .off_cpu = opt.off_cpu,
                                       .switch_event = off_cpu.switch_event,
                                       .timestamps = !opt.no_timestamps,
                                       .kernel_spans = off_cpu.bpf != nullptr};
  const collect::EventSpec& first = config.events.front();
  if (opt.period != 0) build.period = static_cast<int64_t>(opt.period);
  else if (first.counts_time()) build.period = static_cast<int64_t>(1'000'000'000 / opt.frequency);
  collect::ProfileBuilder builder(build);

  const int64_t start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  const uint64_t start_monotonic = collect::monotonic_ns();
  builder.recording_started(start_monotonic);
  LoopResult loop;
  {
    RecordSignals signals;
    LoopSettings settings;
    settings.duration_seconds = opt.duration;
    if (child) {
      if (auto st = child->start(); !st) return report(st.error());
      settings.command = &*child;
    } else if (config.target == collect::TargetKind::processes) {
      settings.pids = config.pids;
    }
    loop = run_record_loop(**sampler, builder, settings);
  }

  builder.recording_ended(start_monotonic + static_cast<uint64_t>(loop.seconds * 1e9));
  if (off_cpu.bpf) {
    // After the sampler's records (the spans' user frames need the mappings they brought)
    // and the end (where the spans still open are cut).
    off_cpu.bpf->stop();
    off_cpu.bpf->for_each_span([&](const collect::KernelOffCpuSpan& span) { builder.on_kernel_span(span); });
  }
  const collect::SamplerStats stats = (*sampler)->stats();
  core::Profile profile = builder.finish();
  // After finish(): it adds the off-CPU spans still open.
  const collect::ProfileBuilderStats built = builder.stats();
  profile.time_nanos = start_ns;
  profile.duration_nanos = static_cast<int64_t>(loop.seconds * 1e9);
  std::string command_line = "tally record";
  for (const auto& e : config.events) command_line += " -e " + e.text;
  for (const auto& a : opt.command) command_line += " " + a;
  profile.comments.push_back(profile.intern(command_line));
  std::vector<std::string> summary = summary_lines(profile, stats, built, loop, child ? &*child : nullptr);
  if (opt.off_cpu)
    append_off_cpu_summary(summary, off_cpu, built, stats, config.sampling.call_graph);
  for (const std::string& line : summary) {
    profile.comments.push_back(profile.intern(line));
    std::fprintf(stderr, "tally: %s\n", line.c_str());
  }
  if (profile.sample_count() == 0)
    std::fprintf(stderr, "tally: warning: no samples were recorded (the target ran too briefly "
                         "or was idle); the profile is empty\n");

  const int status = write_recorded(std::move(profile), opt, *format);
  if (status != kOk) return status;
  // The command's status (128 + N for signal N) once the profile is written.
  return child && child->exited() ? child->exit_code() : kOk;
}

}  // namespace

void add_record_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<RecordOptions>();
  CLI::App* cmd = app.add_subcommand(
      "record",
      "Sample a command (-- CMD), running processes (-p) or every CPU (-a) with "
      "perf_event_open and write a profile (default tally.pb.gz, pprof). Each sample weighs "
      "the period the kernel counted. Exit status: the command's once the profile is "
      "written; tally's own codes when tally fails.");
  cmd->add_option("-e,--event", opt->events,
                  "event to sample (repeatable, one sample type each): cpu-clock, task-clock, "
                  "page-faults, context-switches, cycles, instructions, cache-misses, "
                  "L1-dcache-load-misses, rNNNN, 0xz0000yyzz, with :u / :k; default: cycles "
                  "if the hardware counts them, else cpu-clock");
  auto* freq = cmd->add_option("-F,--freq", opt->frequency, "samples per second (default 999)");
  auto* count = cmd->add_option("-c,--count", opt->period, "sample every PERIOD events instead");
  freq->excludes(count);
  cmd->add_option("-g,--call-graph", opt->call_graph,
                  "call stacks: dwarf[,SIZE] (default; SIZE bytes of user stack per sample, "
                  "default 16384, unwound with the binaries' CFI), fp (the kernel's frame "
                  "pointer walk) or none");
  cmd->add_option("-p,--pid", opt->pids,
                  "record running processes PID[,PID]: every thread, and threads they create "
                  "later; stops on SIGINT, at --duration, or when they have all exited");
  cmd->add_flag("-a,--all-cpus", opt->all_cpus,
                "record every process on every CPU (root or CAP_PERFMON); stops on SIGINT or "
                "at --duration");
  cmd->add_option("--duration", opt->duration,
                  "stop after SECS seconds (a command still running is sent SIGTERM)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-o,--output", opt->output,
                  "output file (default tally.pb.gz; tally.prof, callgrind.out.tally, "
                  "tally.folded, tally.dcpi/ for the other formats)");
  cmd->add_option("--format", opt->format, "output format: " + formats::writable_format_names() +
                                               " (default pprof)");
  cmd->add_flag("--off-cpu", opt->off_cpu,
                "also record where threads wait: every switch-out of a followed thread with "
                "its stack, how long it stayed off the CPU and why (sleep, futex, io, "
                "preempted). Sample types cpu, off-cpu and wall (the reports' default); "
                "samples are labelled with tid, timestamp and, off the CPU, reason");
  cmd->add_flag("--no-timestamps", opt->no_timestamps,
                "--off-cpu without the timestamp labels: samples of one stack merge, so memory "
                "and the profile grow with distinct stacks instead of with every context "
                "switch (a timeline then cannot be drawn)");
  cmd->add_flag("--preload", opt->preload,
                "profile the command from inside with libtally (LD_PRELOAD, gperftools' "
                "CPUPROFILE), for machines where perf_event_open is refused: CPU time of every "
                "thread at -F Hz, frame-pointer stacks, child processes merged with pid labels");
  add_symbolize_flags(cmd, opt->symbolize, "local");
  cmd->add_option("command", opt->command, "the command to record, after --");
  cmd->final_callback([opt, &run] { run = [opt] { return run_record(*opt); }; });
}

}  // namespace tally::cli
