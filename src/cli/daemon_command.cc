// `tally daemon --db DIR`: continuous profiling of the whole machine (DCPI's dcpid).
// Samples every CPU for every process through the sampler, attributes each sample to its
// image and offset (daemon_collector.h), aggregates in memory and flushes into the
// profile database every --flush seconds, on `tally flush`, before `tally epoch` starts a
// new epoch, and on SIGTERM / SIGINT before it exits. A flush that fails (a full disk) is
// logged; the samples stay in memory and the flush is tried again 30 s later.
#include <signal.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "cli/daemon_collector.h"
#include "cli/daemon_control.h"
#include "cli/daemon_log.h"
#include "collect/default_event.h"
#include "collect/event_spec.h"
#include "collect/sampler.h"
#include "collect/trace_clock.h"
#include "store/database.h"

namespace tally::cli {

namespace {

struct DaemonOptions {
  std::string db;
  std::vector<std::string> events;
  uint64_t frequency = 99;
  double flush_seconds = 300;
  std::string call_graph = "fp";
  std::string log;
  bool idle = false;
};

volatile std::sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

store::MachineInfo machine_info() {
  store::MachineInfo m;
  utsname u{};
  if (::uname(&u) == 0) m.platform = fmt::format("{} {} {}", u.machine, u.sysname, u.release);
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (!line.starts_with("cpu MHz")) continue;
    if (auto colon = line.find(':'); colon != std::string::npos)
      m.cpuspeed_mhz = static_cast<uint64_t>(std::strtod(line.c_str() + colon + 1, nullptr) + 0.5);
    break;
  }
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpu_count = cpus > 0 ? static_cast<uint64_t>(cpus) : 0;
  return m;
}

// EVENT or EVENT:PERIOD (a fixed period: every PERIOD events, or nanoseconds of a clock).
core::Expected<std::pair<collect::EventSpec, uint64_t>> parse_daemon_event(const std::string& text) {
  uint64_t period = 0;
  std::string name = text;
  if (auto colon = text.rfind(':'); colon != std::string::npos && colon + 1 < text.size() &&
                                    text.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    period = std::strtoull(text.c_str() + colon + 1, nullptr, 10);
    if (period == 0) return core::Error{"-e " + text + ": the period must be at least 1"};
    name = text.substr(0, colon);
  }
  auto event = collect::parse_event(name);
  if (!event) return event.error();
  return std::pair(*event, period);
}

class Daemon {
 public:
  Daemon(DaemonLog& log, store::Database& db, std::string epoch, collect::Sampler& sampler,
         store::Aggregate& aggregate, DaemonCollector& collector, const DaemonOptions& options)
      : log_(log), db_(db), epoch_(std::move(epoch)), sampler_(sampler), aggregate_(aggregate),
        collector_(collector), options_(options), machine_(machine_info()) {}

  int run(ControlServer& control);

 private:
  // Flushes what is in memory; the text for the log and the control client.
  core::Expected<std::string> flush(const char* why);
  void handle(ControlServer::Request& request);
  std::string status() const;

  DaemonLog& log_;
  store::Database& db_;
  std::string epoch_;
  collect::Sampler& sampler_;
  store::Aggregate& aggregate_;
  DaemonCollector& collector_;
  const DaemonOptions& options_;
  store::MachineInfo machine_;
  uint64_t next_flush_ns_ = 0;
  uint64_t flushed_samples_ = 0;
  uint64_t started_ns_ = collect::monotonic_ns();
};

core::Expected<std::string> Daemon::flush(const char* why) {
  // What the rings hold up to now goes in too.
  (void)sampler_.read(collector_, 0);
  const uint64_t pending = aggregate_.pending_samples();
  const auto started = std::chrono::steady_clock::now();
  const std::string epoch_before = epoch_;
  auto result = db_.flush_rolling_over(epoch_, aggregate_, machine_,
                                       static_cast<int64_t>(std::time(nullptr)));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const uint64_t now = collect::monotonic_ns();
  if (!result) {
    // Retry sooner than the interval: the disk may have room again soon.
    const double retry = std::min(options_.flush_seconds, 30.0);
    next_flush_ns_ = now + static_cast<uint64_t>(retry * 1e9);
    log_.line(fmt::format("flush ({}) failed: {}; {} samples kept in memory, retrying in {:g} s",
                          why, result.error().message, aggregate_.pending_samples(), retry));
    return result.error();
  }
  next_flush_ns_ = now + static_cast<uint64_t>(options_.flush_seconds * 1e9);
  for (const std::string& w : result->warnings) log_.line("warning: " + w);
  if (epoch_ != epoch_before) log_.line(fmt::format("epoch {} ended, epoch {} begins", epoch_before, epoch_));
  flushed_samples_ += result->samples;
  std::string text = fmt::format("flushed {} samples ({} files) into epoch {} in {:.3f} s",
                                 result->samples, result->files, epoch_, seconds);
  if (pending != 0 || std::string_view(why) != "timer") log_.line(fmt::format("{} ({})", text, why));
  collector_.forget_exited(now, 10'000'000'000ULL);
  return text;
}

std::string Daemon::status() const {
  const collect::SamplerStats& s = sampler_.stats();
  const CollectorStats& c = collector_.stats();
  return fmt::format("epoch {}; samples {} ({} pending, {} flushed), lost {}, throttled {}; "
                     "processes {}; unmapped frames {}; cpu {:.3f} s in {:.1f} s",
                     epoch_, s.samples, aggregate_.pending_samples(), flushed_samples_,
                     s.lost + s.lost_samples, s.throttled, collector_.processes(),
                     c.unmapped_frames, cpu_seconds(),
                     double(collect::monotonic_ns() - started_ns_) / 1e9);
}

void Daemon::handle(ControlServer::Request& request) {
  if (request.command == "flush") {
    auto text = flush("tally flush");
    ControlServer::reply(request, bool(text), text ? *text : text.error().message);
  } else if (request.command == "epoch") {
    auto text = flush("tally epoch");
    if (!text) {
      ControlServer::reply(request, false, "the epoch was not changed: " + text.error().message);
      return;
    }
    auto next = db_.start_epoch(static_cast<int64_t>(std::time(nullptr)));
    if (!next) {
      log_.line("cannot start a new epoch: " + next.error().message);
      ControlServer::reply(request, false, next.error().message);
      return;
    }
    log_.line(fmt::format("epoch {} ended, epoch {} begins", epoch_, *next));
    epoch_ = *next;
    ControlServer::reply(request, true, fmt::format("{}; new epoch {}", *text, epoch_));
  } else if (request.command == "status") {
    ControlServer::reply(request, true, status());
  } else {
    ControlServer::reply(request, false, "unknown command '" + request.command +
                                             "' (expected flush, epoch or status)");
  }
}

int Daemon::run(ControlServer& control) {
  next_flush_ns_ = collect::monotonic_ns() + static_cast<uint64_t>(options_.flush_seconds * 1e9);
  while (!g_stop) {
    // A quarter second at most between looks at the control socket and the clock.
    if (auto read = sampler_.read(collector_, 250); !read) {
      log_.line("reading the ring buffers failed: " + read.error().message);
      break;
    }
    std::string refused;
    while (auto request = control.accept(refused)) handle(*request);
    if (!refused.empty()) log_.line(refused);
    if (collect::monotonic_ns() >= next_flush_ns_) (void)flush("timer");
  }
  sampler_.disable();
  (void)sampler_.drain(collector_);
  auto last = flush(g_stop ? "exit" : "exit after an error");
  log_.line("stopping: " + status());
  return last ? kOk : kIoError;
}

int run_daemon(const DaemonOptions& opt) {
  if (opt.frequency == 0) return usage_error("-F must be at least 1");
  if (!(opt.flush_seconds >= 1)) return usage_error("--flush must be at least 1 second");
  collect::SamplerConfig config;
  config.target = collect::TargetKind::system_wide;
  for (const std::string& text : opt.events) {
    auto event = parse_daemon_event(text);
    if (!event) return report(event.error());
    config.events.push_back(event->first);
    config.periods.push_back(event->second);
  }
  auto log = DaemonLog::open(opt.log);
  if (!log) return report(log.error());
  if (config.events.empty()) {
    auto chosen = collect::default_sampling_event();
    log->line(chosen.why);
    config.events.push_back(chosen.event);
    config.periods.push_back(0);
  }
  // A clock sampled at HZ is a fixed period of 1e9/HZ ns: the DCPI files' period is exact.
  for (size_t e = 0; e < config.events.size(); ++e)
    if (config.periods[e] == 0 && config.events[e].counts_time())
      config.periods[e] = std::max<uint64_t>(1, 1'000'000'000 / opt.frequency);
  config.sampling.frequency = opt.frequency;
  config.sampling.exclude_idle = !opt.idle;
  if (opt.call_graph == "fp") config.sampling.call_graph = collect::CallGraphMode::fp;
  else if (opt.call_graph == "dwarf") {
    config.sampling.call_graph = collect::CallGraphMode::dwarf;
    config.sampling.stack_bytes = 8192;
  } else if (opt.call_graph == "none") config.sampling.call_graph = collect::CallGraphMode::none;
  else return usage_error("--call-graph must be fp, dwarf or none, not '" + opt.call_graph + "'");

  auto db = store::Database::open(opt.db, /*create=*/true);
  if (!db) return report(db.error());
  auto lock = store::WriterLock::acquire(opt.db);
  if (!lock) return report(lock.error());
  if (size_t stale = db->remove_stale_temporaries(); stale > 0)
    log->line(fmt::format("removed {} temporary file(s) a killed daemon left", stale));
  auto control = ControlServer::listen(control_socket_path(opt.db));
  if (!control) return report(control.error());

  auto sampler = collect::Sampler::open(config);
  if (!sampler) {
    core::Error e = sampler.error();
    e.message = "tally daemon samples every process on every CPU, which needs root or "
                "CAP_PERFMON (or kernel.perf_event_paranoid <= 0): " + e.message;
    return report(e);
  }
  if (!(*sampler)->kernel_excluded().empty())
    log->line("kernel frames are not sampled: " + (*sampler)->kernel_excluded());

  auto epoch = db->start_epoch(static_cast<int64_t>(std::time(nullptr)));
  if (!epoch) return report(epoch.error());

  std::vector<store::EventInfo> events;
  std::string names;
  for (size_t e = 0; e < config.events.size(); ++e) {
    events.push_back({config.events[e].name, std::string(config.events[e].unit())});
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", config.events[e].name,
                         config.periods[e] != 0 ? fmt::format("every {}", config.periods[e])
                                                : fmt::format("{} Hz", opt.frequency));
  }
  store::Aggregate aggregate(std::move(events), config.sampling.call_graph != collect::CallGraphMode::none);
  DaemonCollector collector(aggregate, config.sampling.call_graph);

  struct sigaction sa {};
  sa.sa_handler = on_stop;  // no SA_RESTART: the wait in the sampler ends at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  log->line(fmt::format("pid {}: sampling {} on {} CPU(s), call stacks {}, flushing every {:g} s "
                        "into {} (epoch {})",
                        ::getpid(), names, (*sampler)->stats().rings, opt.call_graph,
                        opt.flush_seconds, opt.db, *epoch));
  Daemon daemon(*log, *db, *epoch, **sampler, aggregate, collector, opt);
  return daemon.run(*control);
}

}  // namespace

void add_daemon_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<DaemonOptions>();
  CLI::App* cmd = app.add_subcommand(
      "daemon",
      "Continuous profiling of the whole machine (DCPI's dcpid): samples every process on "
      "every CPU and keeps the profiles in the database DIR: DIR/<epoch>/<image>/<event>.dcpi "
      "per image (executable or shared object) and event, call stacks beside them, "
      "DIR/index.tsv naming the images. Flushes every --flush seconds, on `tally flush`, "
      "and on SIGTERM/SIGINT before exiting; `tally epoch` starts a new epoch. Needs root or "
      "CAP_PERFMON. Query with `tally top --db DIR` (and diff, peek, convert...).");
  cmd->add_option("--db", opt->db, "the profile database directory (created if missing)")->required();
  cmd->add_option("-e,--event", opt->events,
                  "EVENT or EVENT:PERIOD to sample (repeatable; default cycles, or cpu-clock "
                  "where there is no cycle counter)");
  cmd->add_option("-F,--freq", opt->frequency,
                  "samples per second per CPU (default 99); clocks are sampled at the fixed "
                  "period 1e9/HZ ns");
  cmd->add_option("--flush", opt->flush_seconds, "seconds between flushes (default 300)");
  cmd->add_option("-g,--call-graph", opt->call_graph,
                  "call stacks: fp (frame pointers, default), dwarf (unwound from an 8 KiB copy "
                  "of the user stack) or none (histograms only)");
  cmd->add_option("--log", opt->log, "append the log to FILE (default: standard error)");
  cmd->add_flag("--idle", opt->idle, "sample idle CPUs too (the kernel's idle loop)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_daemon(*opt); }; });
}

}  // namespace tally::cli
