// `tally push FILE... --to URL`: sends recorded profiles to a fleet store (Grafana
// Pyroscope's push API, or an OTLP profiles endpoint with --format otlp), e.g. from a CI job
// that profiles its benchmarks. Each file is read (any format tally reads), symbolized here
// (the store has no access to this machine's binaries) and sent: for Pyroscope as one
// gzipped pprof with its own id in one series per file, for OTLP as the Profiles of one
// ExportProfilesServiceRequest. Unreachable stores, 5xx and 429 are retried with backoff;
// another 4xx is final.
#include <unistd.h>

#include <fmt/format.h>

#include <memory>
#include <thread>

#include "cli/command.h"
#include "cli/net_commands.h"
#include "cli/symbolize_flags.h"
#include "daemon/backoff.h"
#include "daemon/otlp_request.h"
#include "daemon/push_payload.h"
#include "daemon/push_transport.h"
#include "daemon/service_name.h"
#include "formats/format.h"
#include "formats/gperf/binary_inspector.h"
#include "io/input.h"

namespace tally::cli {

namespace {

struct PushOptions {
  std::vector<std::string> inputs;
  std::string to;
  std::string format = "pyroscope";
  std::string service;
  std::vector<std::string> labels;
  std::vector<std::string> headers;
  std::string token_file;
  std::string ca_file;
  unsigned attempts = 5;
  SymbolizeFlags symbolize;
};

// The service of a recorded profile: its main executable's name (the first mapping's).
std::string service_of_profile(const core::Profile& profile, const std::string& fallback) {
  if (!profile.mappings.empty()) {
    std::string path(profile.str(profile.mappings.front().file));
    if (auto slash = path.rfind('/'); slash != std::string::npos) path.erase(0, slash + 1);
    if (!path.empty() && !path.starts_with('[')) return path;
  }
  return fallback;
}

core::Expected<core::Profile> read_symbolized(const std::string& path, const PushOptions& opt) {
  auto in = io::Input::open(path);
  if (!in) return in.error();
  core::Diagnostics diagnostics;
  const gperf::BinaryInspector binaries = gperf::binary_inspector(opt.symbolize.binary_paths);
  auto profile = formats::read_profile(std::move(*in), diagnostics, nullptr, true, &binaries);
  print_warnings(diagnostics);
  if (!profile) return profile.error();
  core::Diagnostics notes;
  auto symbolized = apply_symbolize_flags(opt.symbolize, *profile, notes);
  print_warnings(notes);
  if (!symbolized) return symbolized.error();
  return profile;
}

int run_push(const PushOptions& opt) {
  auto format = daemon::parse_push_format(opt.format);
  if (!format) return usage_error(format.error().message);
  if (opt.attempts == 0) return usage_error("--attempts must be at least 1");
  std::vector<daemon::Label> extra;
  for (const std::string& text : opt.labels) {
    daemon::Label label;
    if (std::string why = daemon::parse_label(text, label); !why.empty()) return usage_error(why);
    extra.push_back(std::move(label));
  }
  auto transport = daemon::PushTransport::open({.url = opt.to,
                                                .format = *format,
                                                .headers = opt.headers,
                                                .token_file = opt.token_file,
                                                .ca_file = opt.ca_file});
  if (!transport) return usage_error(transport.error().message);

  std::vector<daemon::ProfileSeries> series;   // pyroscope
  std::vector<daemon::OtlpProfile> otlp;        // otlp
  uint64_t samples = 0;
  const std::string host = daemon::host_name();
  for (const std::string& path : opt.inputs) {
    auto profile = read_symbolized(path, opt);
    if (!profile) return report(profile.error());
    if (profile->sample_count() == 0) {
      std::fprintf(stderr, "tally: error: %s: no samples to push\n", path.c_str());
      return kUnsupported;
    }
    samples += profile->sample_count();
    const std::string type = daemon::profile_type_name(*profile);
    const std::string service =
        !opt.service.empty() ? opt.service : service_of_profile(*profile, "tally");
    if (*format == daemon::PushFormat::otlp)
      otlp.push_back({daemon::otlp_resource(service, host, extra), std::move(*profile)});
    else
      series.push_back({daemon::series_labels(type, service, host, extra),
                        {daemon::raw_sample(std::move(*profile))}});
  }
  const size_t profiles = opt.inputs.size();
  const std::string message = *format == daemon::PushFormat::otlp
                                  ? daemon::encode_otlp_request(std::move(otlp))
                                  : daemon::encode_push_request(series);

  daemon::Backoff backoff(1.0, 30.0);
  for (unsigned attempt = 1;; ++attempt) {
    daemon::PushOutcome outcome = transport->post(message);
    if (outcome.kind == daemon::PushOutcome::sent) {
      std::fprintf(stderr, "tally: pushed %zu profile(s), %s stacks, %zu bytes to %s\n",
                   profiles, fmt::format("{}", samples).c_str(), message.size(),
                   daemon::push_endpoint(transport->target()).c_str());
      return kOk;
    }
    if (outcome.kind == daemon::PushOutcome::refused) {
      std::fprintf(stderr, "tally: error: the store refused the push: %s\n", outcome.message.c_str());
      return kUnsupported;
    }
    if (attempt == opt.attempts) {
      std::fprintf(stderr, "tally: error: push failed after %u attempt(s): %s\n", attempt,
                   outcome.message.c_str());
      return kIoError;
    }
    const double wait = backoff.next();
    std::fprintf(stderr, "tally: push failed (%s); retrying in %.1f s\n", outcome.message.c_str(), wait);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

}  // namespace

void add_push_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<PushOptions>();
  CLI::App* cmd = app.add_subcommand("push", kPushDescription);
  cmd->add_option("FILE", opt->inputs, "profiles to push")->required();
  cmd->add_option("--to", opt->to, "the store's base URL (http:// or https://)")->required();
  cmd->add_option("--format", opt->format, "pyroscope (default) or otlp");
  cmd->add_option("--service", opt->service, "the service_name label");
  cmd->add_option("--label", opt->labels, "NAME=VALUE: a label of every series (repeatable)");
  cmd->add_option("--push-header", opt->headers,
                  "'Name: value': an HTTP header of the request (repeatable), e.g. "
                  "'X-Scope-OrgID: team' for a multi-tenant store");
  cmd->add_option("--push-token-file", opt->token_file,
                  "FILE holding a bearer token (not given on the command line, where ps shows it)");
  cmd->add_option("--push-ca", opt->ca_file, "a CA certificate (PEM) trusted besides the system's");
  cmd->add_option("--attempts", opt->attempts, "tries before giving up on an outage (default 5)");
  opt->symbolize.name_unresolved = false;
  add_symbolize_flags(cmd, opt->symbolize, "local");
  cmd->final_callback([opt, &run] { run = [opt] { return run_push(*opt); }; });
}

}  // namespace tally::cli
