// `tally daemon --db DIR`: continuous profiling of the whole machine (DCPI's dcpid).
// Samples every CPU for every process through the sampler, attributes each sample to its
// image and offset (daemon_collector.h), aggregates in memory and flushes into the
// profile database every --flush seconds, on `tally flush`, before `tally epoch` starts a
// new epoch, and on SIGTERM / SIGINT before it exits. A flush that fails (a full disk) is
// logged; the samples stay in memory and the flush is tried again 30 s later.
// With --push URL it also pushes each --push-every interval's profiles, per service and
// event, to a fleet store, Pyroscope or OTLP (src/daemon: spooled to disk first, retried
// with backoff); the database is then optional.
#include <signal.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <future>
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
#include "daemon/otlp_request.h"
#include "daemon/push_interval.h"
#include "daemon/push_payload.h"
#include "daemon/push_symbolizer.h"
#include "daemon/pusher.h"
#include "daemon/service_name.h"
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
  bool off_cpu = false;
  // --push
  std::string push_url;
  std::string push_format = "pyroscope";
  double push_every = 15;
  std::string service;
  std::vector<std::string> labels;
  std::vector<std::string> push_headers;
  std::string push_token_file;
  std::string push_ca;
  std::string spool;
  double spool_max_mb = 64;
  double push_retry_max = 60;
  bool status = false;  // ask the running daemon instead
};

// What the daemon needs to push; absent without --push.
struct PushPath {
  std::unique_ptr<daemon::PushInterval> interval;
  std::unique_ptr<daemon::Pusher> pusher;
  std::vector<daemon::Label> labels;  // --label pairs
  std::string host;
  daemon::PushFormat format = daemon::PushFormat::pyroscope;
  // Kept across intervals (used by one packing thread at a time).
  std::unique_ptr<daemon::PushSymbolizer> symbolizer;
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
  // `db` null: push only (--push without --db).
  Daemon(DaemonLog& log, store::Database* db, std::string epoch, collect::Sampler& sampler,
         store::Aggregate& aggregate, DaemonCollector& collector, const DaemonOptions& options,
         PushPath& push)
      : log_(log), db_(db), epoch_(std::move(epoch)), sampler_(sampler), aggregate_(aggregate),
        collector_(collector), options_(options), machine_(machine_info()), push_(push) {}

  int run(ControlServer& control);

 private:
  // Flushes what is in memory; the text for the log and the control client.
  core::Expected<std::string> flush(const char* why);
  // Spools the interval's profiles for the pusher; the text for the log.
  std::string push(const char* why);
  void finish_packing();  // waits for the interval being symbolized and spooled
  void handle(ControlServer::Request& request);
  std::string status() const;
  std::string base_status() const;

  DaemonLog& log_;
  store::Database* db_;
  std::string epoch_;
  collect::Sampler& sampler_;
  store::Aggregate& aggregate_;
  DaemonCollector& collector_;
  const DaemonOptions& options_;
  store::MachineInfo machine_;
  uint64_t next_flush_ns_ = 0;
  uint64_t flushed_samples_ = 0;
  uint64_t started_ns_ = collect::monotonic_ns();
  PushPath& push_;
  uint64_t next_push_ns_ = 0;
  uint64_t push_started_ns_ = collect::monotonic_ns();
  int64_t push_started_unix_ns_ = unix_ns();
  uint64_t pushed_samples_ = 0;
  std::future<void> packing_;

  static int64_t unix_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch()).count();
  }
};

std::string Daemon::push(const char* why) {
  if (!push_.interval) return "";
  (void)sampler_.read(collector_, 0);
  const uint64_t now = collect::monotonic_ns();
  const int64_t now_unix = unix_ns();
  next_push_ns_ = now + static_cast<uint64_t>(options_.push_every * 1e9);
  auto profiles = push_.interval->take(aggregate_, push_started_unix_ns_,
                                       now_unix - push_started_unix_ns_);
  push_started_ns_ = now;
  push_started_unix_ns_ = now_unix;
  if (db_ == nullptr) collector_.forget_exited(now, 10'000'000'000ULL);  // else flush() does
  if (profiles.empty()) return "";
  uint64_t samples = 0;
  for (const auto& p : profiles) samples += p.samples;
  pushed_samples_ += samples;
  const size_t count = profiles.size();
  // Symbolizing reads the binaries: on a thread of its own, so that the rings are read on
  // time meanwhile. One interval at a time, in order.
  if (packing_.valid()) packing_.wait();
  packing_ = std::async(std::launch::async, [this, samples, why,
                                             profiles = std::move(profiles)]() mutable {
    core::Diagnostics diagnostics;
    push_.symbolizer->symbolize(profiles, diagnostics);
    std::string message;
    if (push_.format == daemon::PushFormat::otlp) {
      std::vector<daemon::OtlpProfile> otlp;
      for (auto& p : profiles)
        otlp.push_back({daemon::otlp_resource(p.service, push_.host, push_.labels),
                        std::move(p.profile)});
      message = daemon::encode_otlp_request(std::move(otlp));
    } else {
      std::vector<daemon::ProfileSeries> series;
      for (auto& p : profiles) {
        const std::string type = daemon::profile_type_name(p.profile);
        series.push_back({daemon::series_labels(type, p.service, push_.host, push_.labels),
                          {daemon::raw_sample(std::move(p.profile))}});
      }
      message = daemon::encode_push_request(series);
    }
    if (auto st = push_.pusher->enqueue(message, samples); !st)
      log_.line(fmt::format("push ({}): cannot spool {} samples: {}", why, samples, st.error().message));
  });
  return fmt::format("{} samples of {} profile(s) to push", samples, count);
}

void Daemon::finish_packing() {
  if (packing_.valid()) packing_.wait();
}

core::Expected<std::string> Daemon::flush(const char* why) {
  if (db_ == nullptr) {  // --push only: a flush pushes
    std::string text = push(why);
    return text.empty() ? std::string("nothing to push") : text;
  }
  // What the rings hold up to now goes in too.
  (void)sampler_.read(collector_, 0);
  const uint64_t pending = aggregate_.pending_samples();
  const auto started = std::chrono::steady_clock::now();
  const std::string epoch_before = epoch_;
  auto result = db_->flush_rolling_over(epoch_, aggregate_, machine_,
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
  std::string pushes;
  if (push_.pusher) {
    const daemon::PushStats p = push_.pusher->stats();
    pushes = fmt::format("; pushes {} ({} bytes, {} samples spooled in all), retries {}, "
                         "spooled {} ({} bytes), refused {}, dropped {} ({} samples)",
                         p.pushes, p.bytes, pushed_samples_, p.retries, p.spooled_files,
                         p.spooled_bytes, p.refused, p.dropped_files, p.dropped_samples);
    const auto cache = push_.symbolizer->counters();
    pushes += fmt::format("; symbol cache {} addresses, {} hits, {} misses", cache.cached,
                          cache.hits, cache.misses);
  }
  return pushes.empty() ? base_status() : base_status() + pushes;
}

std::string Daemon::base_status() const {
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
    if (db_ == nullptr) {
      ControlServer::reply(request, false, "this daemon keeps no database (--push without --db)");
      return;
    }
    auto text = flush("tally epoch");
    if (!text) {
      ControlServer::reply(request, false, "the epoch was not changed: " + text.error().message);
      return;
    }
    auto next = db_->start_epoch(static_cast<int64_t>(std::time(nullptr)));
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
  next_push_ns_ = collect::monotonic_ns() + static_cast<uint64_t>(options_.push_every * 1e9);
  while (!g_stop) {
    // A quarter second at most between looks at the control socket and the clock.
    if (auto read = sampler_.read(collector_, 250); !read) {
      log_.line("reading the ring buffers failed: " + read.error().message);
      break;
    }
    std::string refused;
    while (auto request = control.accept(refused)) handle(*request);
    if (!refused.empty()) log_.line(refused);
    if (db_ != nullptr && collect::monotonic_ns() >= next_flush_ns_) (void)flush("timer");
    if (push_.interval && collect::monotonic_ns() >= next_push_ns_) (void)push("timer");
  }
  sampler_.disable();
  (void)sampler_.drain(collector_);
  core::Expected<std::string> last = std::string();
  if (db_ != nullptr) last = flush(g_stop ? "exit" : "exit after an error");
  if (push_.pusher) {
    if (std::string text = push("exit"); !text.empty()) log_.line(text + " (exit)");
    finish_packing();
    // A few seconds for the store to take the rest; what it does not stays spooled.
    if (!push_.pusher->drain(5))
      log_.line(fmt::format("push: {} request(s) stay spooled for the next start",
                            push_.pusher->stats().spooled_files));
  }
  log_.line("stopping: " + status());
  return last ? kOk : kIoError;
}

// `tally daemon --status --db DIR` (or --spool DIR for a push-only daemon): the running
// daemon's status line, counters of the push included.
int print_status(const DaemonOptions& opt) {
  const std::string dir = !opt.db.empty() ? opt.db : opt.spool;
  if (dir.empty()) return usage_error("--status needs --db DIR (or --spool DIR of a push-only daemon)");
  auto text = send_control(dir, "status", 5000);
  if (!text) return report(text.error());
  std::printf("%s\n", text->c_str());
  return kOk;
}

int run_daemon(const DaemonOptions& opt) {
  if (opt.status) return print_status(opt);
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

  // --off-cpu: the context-switches event at every switch, with SWITCH records for the
  // switch-ins (daemon_off_cpu.h). A sample per switch: bigger rings, a short stack copy.
  size_t off_cpu_event = SIZE_MAX;
  if (opt.off_cpu) {
    auto event = collect::parse_event("context-switches");
    if (!event) return report(event.error());
    off_cpu_event = config.events.size();
    config.events.push_back(*event);
    config.periods.push_back(1);
    config.stack_bytes.resize(config.events.size(), 0);
    config.stack_bytes[off_cpu_event] = std::min<uint32_t>(config.sampling.stack_bytes, 8192);
    config.context_switch_event = static_cast<int>(off_cpu_event);
    if (config.ring_pages == 0) config.ring_pages = 2048;  // 8 MiB per CPU
  }

  if (opt.db.empty() && opt.push_url.empty()) return usage_error("--db DIR or --push URL is required");
  PushPath push;
  const std::string spool = !opt.spool.empty() ? opt.spool : opt.db.empty() ? "" : opt.db + "/spool";
  if (!opt.push_url.empty()) {
    if (!(opt.push_every >= 1)) return usage_error("--push-every must be at least 1 second");
    if (!(opt.spool_max_mb > 0)) return usage_error("--spool-max-mb must be more than 0");
    if (!(opt.push_retry_max >= 1)) return usage_error("--push-retry-max must be at least 1 second");
    if (spool.empty()) return usage_error("--push without --db needs --spool DIR");
    auto format = daemon::parse_push_format(opt.push_format);
    if (!format) return usage_error(format.error().message);
    push.format = *format;
    for (const std::string& text : opt.labels) {
      daemon::Label label;
      if (std::string why = daemon::parse_label(text, label); !why.empty()) return usage_error(why);
      push.labels.push_back(std::move(label));
    }
    auto transport = daemon::PushTransport::open({.url = opt.push_url,
                                                  .format = *format,
                                                  .headers = opt.push_headers,
                                                  .token_file = opt.push_token_file,
                                                  .ca_file = opt.push_ca});
    if (!transport) return usage_error(transport.error().message);
    DaemonLog* log_ptr = &*log;
    auto pusher = daemon::Pusher::start(
        std::move(*transport),
        {.spool_dir = spool,
         .spool_max_bytes = static_cast<uint64_t>(opt.spool_max_mb * 1024 * 1024),
         .retry_max_seconds = opt.push_retry_max},
        [log_ptr](const std::string& line) { log_ptr->line(line); });
    if (!pusher) return report(pusher.error());
    push.pusher = std::move(*pusher);
    push.interval = std::make_unique<daemon::PushInterval>(opt.service);
    analyze::ReportSymbolize symbolize;
    symbolize.debuginfod = false;  // no network fetches from the daemon
    // One thread: a background job, and each worker thread's malloc arena adds to the peak.
    symbolize.threads = 1;
    push.symbolizer = std::make_unique<daemon::PushSymbolizer>(symbolize);
    push.host = daemon::host_name();
  }

  std::optional<store::Database> db;
  std::optional<store::WriterLock> lock;
  if (!opt.db.empty()) {
    auto opened = store::Database::open(opt.db, /*create=*/true);
    if (!opened) return report(opened.error());
    db.emplace(std::move(*opened));
    auto locked = store::WriterLock::acquire(opt.db);
    if (!locked) return report(locked.error());
    lock.emplace(std::move(*locked));
    if (size_t stale = db->remove_stale_temporaries(); stale > 0)
      log->line(fmt::format("removed {} temporary file(s) a killed daemon left", stale));
  }
  // Without a database the control socket lives in the spool directory.
  auto control = ControlServer::listen(control_socket_path(!opt.db.empty() ? opt.db : spool));
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

  core::Expected<std::string> epoch = std::string("(none: push only)");
  if (db) epoch = db->start_epoch(static_cast<int64_t>(std::time(nullptr)));
  if (!epoch) return report(epoch.error());

  std::vector<store::EventInfo> events;
  std::string names;
  for (size_t e = 0; e < config.events.size(); ++e) {
    if (e == off_cpu_event) {
      events.push_back({"off-cpu", "nanoseconds"});
      names += ", off-cpu (context-switches: every switch-out, its time off the CPU)";
      continue;
    }
    events.push_back({config.events[e].name, std::string(config.events[e].unit())});
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", config.events[e].name,
                         config.periods[e] != 0 ? fmt::format("every {}", config.periods[e])
                                                : fmt::format("{} Hz", opt.frequency));
  }
  store::Aggregate aggregate(std::move(events), config.sampling.call_graph != collect::CallGraphMode::none);
  DaemonCollector collector(aggregate, config.sampling.call_graph);
  collector.also_push_to(push.interval.get());
  if (push.symbolizer) collector.set_kernel_text_start(push.symbolizer->kernel_text_start());
  if (off_cpu_event != SIZE_MAX) collector.count_off_cpu(off_cpu_event);

  struct sigaction sa {};
  sa.sa_handler = on_stop;  // no SA_RESTART: the wait in the sampler ends at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  log->line(fmt::format("pid {}: sampling {} on {} CPU(s), call stacks {}, flushing every {:g} s "
                        "into {} (epoch {})",
                        ::getpid(), names, (*sampler)->stats().rings, opt.call_graph,
                        opt.flush_seconds, opt.db.empty() ? "no database" : opt.db, *epoch));
  if (push.pusher)
    log->line(fmt::format("pushing every {:g} s to {} (spool {})", opt.push_every,
                          daemon::push_endpoint(
                              daemon::PushTarget{.url = opt.push_url}),
                          spool));
  Daemon daemon(*log, db ? &*db : nullptr, *epoch, **sampler, aggregate, collector, opt, push);
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
  cmd->add_option("--db", opt->db,
                  "the profile database directory (created if missing); optional with --push");
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
  cmd->add_flag("--off-cpu", opt->off_cpu,
                "also record the time threads spend off the CPU, per stack they left from "
                "(event off-cpu, nanoseconds): a sample at every context switch, so it costs "
                "per switch (see bench/README.md); not the default");
  cmd->add_option("--push", opt->push_url,
                  "also push each interval's profiles to a fleet store at URL: Grafana "
                  "Pyroscope's push API (URL/push.v1.PusherService/Push), one series per "
                  "service and event, symbolized here; or OTLP (--push-format otlp)");
  cmd->add_option("--push-format", opt->push_format,
                  "pyroscope (default) or otlp: OTLP/HTTP profiles (URL/v1development/profiles, "
                  "opentelemetry-proto v1.11.0), service.name and host.name resource attributes");
  cmd->add_option("--push-every", opt->push_every, "seconds per pushed interval (default 15)");
  cmd->add_option("--service", opt->service,
                  "the service_name label of every sample (default: the process's systemd "
                  ".service unit, else its executable's name)");
  cmd->add_option("--label", opt->labels, "NAME=VALUE: a label of every pushed series (repeatable)");
  cmd->add_option("--push-header", opt->push_headers,
                  "'Name: value': an HTTP header of each push (repeatable), e.g. "
                  "'X-Scope-OrgID: team'");
  cmd->add_option("--push-token-file", opt->push_token_file, "FILE holding a bearer token");
  cmd->add_option("--push-ca", opt->push_ca, "a CA certificate (PEM) trusted besides the system's");
  cmd->add_option("--spool", opt->spool,
                  "where pushes wait until the store takes them (default DIR/spool of --db)");
  cmd->add_option("--spool-max-mb", opt->spool_max_mb,
                  "bound of the spool; past it the oldest pushes are dropped (default 64)");
  cmd->add_flag("--status", opt->status,
                "print the status of the daemon running on --db DIR (or --spool DIR) and exit: "
                "samples, flushes, pushes, bytes, retries, spooled, refused, dropped");
  cmd->add_option("--push-retry-max", opt->push_retry_max,
                  "longest wait between retries of a failed push, seconds (default 60)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_daemon(*opt); }; });
}

}  // namespace tally::cli
