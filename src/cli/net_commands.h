// The commands that run in tally-net: the daemon and its control requests, the web UI and
// the push to fleet stores. They need the network libraries (libcurl, cpp-httplib and the
// TLS stacks behind them: some 30 shared libraries), which every other command would load
// at start for nothing: 10 ms of CPU and 10 MB of memory on each `tally top`. git keeps
// libcurl out of its main binary for the same reason. `tally NAME ...` execs tally-net
// with the same arguments; the descriptions are here so both list them alike.
#pragma once

#include "cli/command.h"

namespace tally::cli {

inline constexpr const char* kDaemonDescription =
    "Continuous profiling of the whole machine (DCPI's dcpid): samples every process on "
    "every CPU and keeps the profiles in the database DIR: DIR/<epoch>/<image>/<event>.dcpi "
    "per image (executable or shared object) and event, call stacks beside them, "
    "DIR/index.tsv naming the images. Flushes every --flush seconds, on `tally flush`, "
    "and on SIGTERM/SIGINT before exiting; `tally epoch` starts a new epoch. Needs root or "
    "CAP_PERFMON. Query with `tally top --db DIR` (and diff, peek, convert...).";
inline constexpr const char* kFlushDescription =
    "Make the tally daemon writing the database DIR flush its samples now.";
inline constexpr const char* kEpochDescription =
    "Make the tally daemon writing the database DIR flush, then start a new epoch.";
inline constexpr const char* kServeDescription =
    "A web UI for a profile (flame graph, top, peek, source, disasm), a comparison "
    "of two (BASE NEW) or the profile database (--db DIR), with a JSON API under "
    "/api/. Listens on 127.0.0.1:8080 or the next free port; prints the URL and "
    "opens a browser when stdout is a terminal. Read-only; answers only requests "
    "whose Host is this address or localhost.";
inline constexpr const char* kPushDescription =
    "Send profiles to a fleet store: Grafana Pyroscope's push API (POST "
    "URL/push.v1.PusherService/Push), or with --format otlp OpenTelemetry's OTLP/HTTP "
    "profiles export (POST URL/v1development/profiles, opentelemetry-proto v1.11.0). Each "
    "FILE (any format tally reads) is symbolized here and sent as a gzipped pprof in its own "
    "series, labelled __name__, service_name (--service, else the profile's executable), "
    "hostname and the --label pairs; in OTLP the labels are the resource attributes "
    "service.name, host.name and the --label pairs. An unreachable store, 5xx and 429 are "
    "retried with exponential backoff and jitter.";

// In tally: a subcommand NAME whose every argument, --help included, goes to tally-net.
void add_net_command_forwarder(CLI::App& app, Runner& run, const char* name,
                               const char* description, char** argv);

}  // namespace tally::cli
