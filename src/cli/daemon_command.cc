// `tally daemon`: the command line of the continuous profiler (src/daemon/run.h runs it).
// Parses and checks the options, opens the push's transport (a bad URL or token file is a
// usage error), and answers --status by asking the running daemon.
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "cli/net_commands.h"
#include "daemon/control.h"
#include "daemon/options.h"
#include "daemon/run.h"

namespace tally::cli {

namespace {

// The options as typed; checked and converted into daemon::Options.
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

// `tally daemon --status --db DIR` (or --spool DIR for a push-only daemon): the running
// daemon's status line, counters of the push included.
int print_status(const DaemonOptions& opt) {
  const std::string dir = !opt.db.empty() ? opt.db : opt.spool;
  if (dir.empty()) return usage_error("--status needs --db DIR (or --spool DIR of a push-only daemon)");
  auto text = daemon::send_control(dir, "status", 5000);
  if (!text) return report(text.error());
  std::printf("%s\n", text->c_str());
  return kOk;
}

int run_daemon(const DaemonOptions& opt) {
  if (opt.status) return print_status(opt);
  if (opt.frequency == 0) return usage_error("-F must be at least 1");
  if (!(opt.flush_seconds >= 1)) return usage_error("--flush must be at least 1 second");
  daemon::Options options{.db = opt.db,
                          .events = opt.events,
                          .frequency = opt.frequency,
                          .flush_seconds = opt.flush_seconds,
                          .log = opt.log,
                          .idle = opt.idle,
                          .off_cpu = opt.off_cpu};
  if (opt.call_graph == "fp") options.call_graph = collect::CallGraphMode::fp;
  else if (opt.call_graph == "dwarf") options.call_graph = collect::CallGraphMode::dwarf;
  else if (opt.call_graph == "none") options.call_graph = collect::CallGraphMode::none;
  else return usage_error("--call-graph must be fp, dwarf or none, not '" + opt.call_graph + "'");
  if (opt.db.empty() && opt.push_url.empty()) return usage_error("--db DIR or --push URL is required");

  std::optional<daemon::PushTransport> transport;
  if (!opt.push_url.empty()) {
    daemon::PushOptions& push = options.push;
    push.spool = !opt.spool.empty() ? opt.spool : opt.db.empty() ? "" : opt.db + "/spool";
    if (!(opt.push_every >= 1)) return usage_error("--push-every must be at least 1 second");
    if (!(opt.spool_max_mb > 0)) return usage_error("--spool-max-mb must be more than 0");
    if (!(opt.push_retry_max >= 1)) return usage_error("--push-retry-max must be at least 1 second");
    if (push.spool.empty()) return usage_error("--push without --db needs --spool DIR");
    auto format = daemon::parse_push_format(opt.push_format);
    if (!format) return usage_error(format.error().message);
    push.url = opt.push_url;
    push.format = *format;
    push.every_seconds = opt.push_every;
    push.service = opt.service;
    push.spool_max_bytes = static_cast<uint64_t>(opt.spool_max_mb * 1024 * 1024);
    push.retry_max_seconds = opt.push_retry_max;
    for (const std::string& text : opt.labels) {
      daemon::Label label;
      if (std::string why = daemon::parse_label(text, label); !why.empty()) return usage_error(why);
      push.labels.push_back(std::move(label));
    }
    auto opened = daemon::PushTransport::open({.url = opt.push_url,
                                               .format = *format,
                                               .headers = opt.push_headers,
                                               .token_file = opt.push_token_file,
                                               .ca_file = opt.push_ca});
    if (!opened) return usage_error(opened.error().message);
    transport.emplace(std::move(*opened));
  }
  if (auto done = daemon::run(options, std::move(transport)); !done) return report(done.error());
  return kOk;
}

}  // namespace

void add_daemon_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<DaemonOptions>();
  CLI::App* cmd = app.add_subcommand("daemon", kDaemonDescription);
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
