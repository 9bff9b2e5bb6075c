#include "daemon/run.h"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <optional>

#include "collect/default_event.h"
#include "collect/event_spec.h"
#include "collect/sampler.h"
#include "daemon/collector.h"
#include "daemon/control.h"
#include "daemon/log.h"
#include "daemon/run_loop.h"
#include "daemon/service_name.h"
#include "store/database.h"

namespace tally::daemon {

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

const char* call_graph_name(collect::CallGraphMode mode) {
  switch (mode) {
    case collect::CallGraphMode::fp: return "fp";
    case collect::CallGraphMode::dwarf: return "dwarf";
    case collect::CallGraphMode::none: break;
  }
  return "none";
}

// The sampler's settings: the events (the default one when none is given, its choice
// logged), clocks at a fixed period, and the off-cpu event last; its index in `off_cpu_event`.
core::Expected<collect::SamplerConfig> sampler_config(const Options& opt, Log& log,
                                                      size_t& off_cpu_event) {
  collect::SamplerConfig config;
  config.target = collect::TargetKind::system_wide;
  for (const std::string& text : opt.events) {
    auto event = parse_event_and_period(text);
    if (!event) return event.error();
    config.events.push_back(event->first);
    config.periods.push_back(event->second);
  }
  if (config.events.empty()) {
    auto chosen = collect::default_sampling_event();
    log.line(chosen.why);
    config.events.push_back(chosen.event);
    config.periods.push_back(0);
  }
  // A clock sampled at HZ is a fixed period of 1e9/HZ ns: the DCPI files' period is exact.
  for (size_t e = 0; e < config.events.size(); ++e)
    if (config.periods[e] == 0 && config.events[e].counts_time())
      config.periods[e] = std::max<uint64_t>(1, 1'000'000'000 / std::max<uint64_t>(1, opt.frequency));
  config.sampling.frequency = opt.frequency;
  config.sampling.exclude_idle = !opt.idle;
  config.sampling.call_graph = opt.call_graph;
  if (opt.call_graph == collect::CallGraphMode::dwarf) config.sampling.stack_bytes = 8192;

  // --off-cpu: the context-switches event at every switch, with SWITCH records for the
  // switch-ins (off_cpu_spans.h). A sample per switch: bigger rings, a short stack copy.
  off_cpu_event = SIZE_MAX;
  if (opt.off_cpu) {
    auto event = collect::parse_event("context-switches");
    if (!event) return event.error();
    off_cpu_event = config.events.size();
    config.events.push_back(*event);
    config.periods.push_back(1);
    config.stack_bytes.resize(config.events.size(), 0);
    config.stack_bytes[off_cpu_event] = std::min<uint32_t>(config.sampling.stack_bytes, 8192);
    config.context_switch_event = static_cast<int>(off_cpu_event);
    if (config.ring_pages == 0) config.ring_pages = 2048;  // 8 MiB per CPU
  }
  return config;
}

core::Expected<PushPath> open_push(const Options& opt, PushTransport transport, Log& log) {
  PushPath push;
  Log* log_ptr = &log;
  auto pusher = Pusher::start(
      std::move(transport),
      {.spool_dir = opt.push.spool,
       .spool_max_bytes = opt.push.spool_max_bytes,
       .retry_max_seconds = opt.push.retry_max_seconds},
      [log_ptr](const std::string& line) { log_ptr->line(line); });
  if (!pusher) return pusher.error();
  push.pusher = std::move(*pusher);
  push.interval = std::make_unique<PushInterval>(opt.push.service);
  analyze::ReportSymbolize symbolize;
  // Debug files not on the host come from $DEBUGINFOD_URLS as for a report (none when it
  // is unset); libdebuginfod's cache keeps them, and its misses, for the next intervals.
  symbolize.debuginfod = true;
  // One thread: a background job, and each worker thread's malloc arena adds to the peak.
  symbolize.threads = 1;
  // Inflated debug files beside the database (on disk: their pages are the page cache's).
  push.symbolizer = std::make_unique<PushSymbolizer>(symbolize, PushSymbolizer::kDefaultMaxBytes, opt.db.empty() ? "/var/tmp" : opt.db);
  push.host = host_name();
  return push;
}

}  // namespace

// EVENT or EVENT:PERIOD (a fixed period: every PERIOD events, or nanoseconds of a clock).
core::Expected<std::pair<collect::EventSpec, uint64_t>> parse_event_and_period(const std::string& text) {
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

core::Status run(const Options& opt, std::optional<PushTransport> transport) {
  auto log = Log::open(opt.log);
  if (!log) return log.error();
  size_t off_cpu_event = SIZE_MAX;
  auto config = sampler_config(opt, *log, off_cpu_event);
  if (!config) return config.error();

  PushPath push;
  if (transport) {
    auto opened = open_push(opt, std::move(*transport), *log);
    if (!opened) return opened.error();
    push = std::move(*opened);
  }

  std::optional<store::Database> db;
  std::optional<store::WriterLock> lock;
  if (!opt.db.empty()) {
    auto opened = store::Database::open(opt.db, /*create=*/true);
    if (!opened) return opened.error();
    db.emplace(std::move(*opened));
    auto locked = store::WriterLock::acquire(opt.db);
    if (!locked) return locked.error();
    lock.emplace(std::move(*locked));
    if (size_t stale = db->remove_stale_temporaries(); stale > 0)
      log->line(fmt::format("removed {} temporary file(s) a killed daemon left", stale));
  }
  // Without a database the control socket lives in the spool directory.
  auto control = ControlServer::listen(control_socket_path(!opt.db.empty() ? opt.db : opt.push.spool));
  if (!control) return control.error();

  auto sampler = collect::Sampler::open(*config);
  if (!sampler) {
    core::Error e = sampler.error();
    e.message = "tally daemon samples every process on every CPU, which needs root or "
                "CAP_PERFMON (or kernel.perf_event_paranoid <= 0): " + e.message;
    return e;
  }
  if (!(*sampler)->kernel_excluded().empty())
    log->line("kernel frames are not sampled: " + (*sampler)->kernel_excluded());

  core::Expected<std::string> epoch = std::string("(none: push only)");
  if (db) epoch = db->start_epoch(static_cast<int64_t>(std::time(nullptr)));
  if (!epoch) return epoch.error();

  std::vector<store::EventInfo> events;
  std::string names;
  for (size_t e = 0; e < config->events.size(); ++e) {
    if (e == off_cpu_event) {
      events.push_back({"off-cpu", "nanoseconds"});
      names += ", off-cpu (context-switches: every switch-out, its time off the CPU)";
      continue;
    }
    events.push_back({config->events[e].name, std::string(config->events[e].unit())});
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", config->events[e].name,
                         config->periods[e] != 0 ? fmt::format("every {}", config->periods[e])
                                                 : fmt::format("{} Hz", opt.frequency));
  }
  store::Aggregate aggregate(std::move(events), opt.call_graph != collect::CallGraphMode::none);
  Collector collector(aggregate, opt.call_graph);
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
                        ::getpid(), names, (*sampler)->stats().rings, call_graph_name(opt.call_graph),
                        opt.flush_seconds, opt.db.empty() ? "no database" : opt.db, *epoch));
  if (push.pusher)
    log->line(fmt::format("pushing every {:g} s to {} (spool {})", opt.push.every_seconds,
                          push_endpoint(PushTarget{.url = opt.push.url, .format = opt.push.format}), opt.push.spool));
  RunLoop loop(*log, db ? &*db : nullptr, *epoch, **sampler, aggregate, collector, opt, push, g_stop);
  return loop.run(*control);
}

}  // namespace tally::daemon
