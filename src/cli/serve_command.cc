// `tally serve FILE [FILE2] | --db DIR`: the web UI (issue 19). Reads and symbolizes the
// profiles once, as the report commands do, then answers the pages and the JSON API
// (src/web) until SIGINT or SIGTERM.
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "cli/command.h"
#include "cli/net_commands.h"
#include "cli/report_flags.h"
#include "web/server.h"

namespace tally::cli {

namespace {

constexpr int kDefaultPort = 8080;

struct ServeCommandOptions {
  std::vector<std::string> files;
  std::string http;  // HOST:PORT; "" = 127.0.0.1:8080 or the next free port
  bool no_browser = false;
  std::string source_path, trim_path;
  ReportFlags report;
};

struct Address {
  std::string host = "127.0.0.1";
  int port = kDefaultPort;
};

// "HOST:PORT", "[IPV6]:PORT" or ":PORT" (loopback).
core::Expected<Address> parse_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  const auto bad = [&] {
    return core::Error{"--http must be HOST:PORT (e.g. 127.0.0.1:8080, [::1]:0), not '" + text + "'",
                       core::ErrorKind::invalid_input};
  };
  if (colon == std::string::npos) return bad();
  Address address;
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (!host.empty()) address.host = host;
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return bad();
  address.port = std::stoi(port);
  if (address.port > 65535) return bad();
  return address;
}

// $BROWSER, else xdg-open, started in a grandchild so that nothing waits for it.
void open_browser(const std::string& url) {
  const char* browser = std::getenv("BROWSER");
  const std::string program = browser && *browser ? browser : "xdg-open";
  const pid_t child = fork();
  if (child < 0) return;
  if (child == 0) {
    if (fork() == 0) {
      setsid();
      std::freopen("/dev/null", "r", stdin);
      std::freopen("/dev/null", "w", stdout);
      std::freopen("/dev/null", "w", stderr);
      execlp(program.c_str(), program.c_str(), url.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    _exit(0);
  }
  waitpid(child, nullptr, 0);  // the intermediate child exits at once
}

void progress(const std::string& message) {
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "tally serve: %s\n", message.c_str());
}

int run_serve(const ServeCommandOptions& opt) {
  web::ServeData data;
  const bool db = using_db(opt.report.db);
  if (db && !opt.files.empty()) return usage_error("give FILE [FILE2] or --db DIR, not both");
  if (!db && opt.files.empty()) return usage_error("give a profile FILE, two (BASE NEW), or --db DIR");
  if (opt.files.size() > 2) return usage_error("at most two profiles: BASE NEW");
  for (const std::string& f : opt.files)
    if (f == "-") return usage_error("tally serve reads files, not standard input");

  Address address;
  const bool explicit_address = !opt.http.empty();
  if (explicit_address) {
    auto parsed = parse_address(opt.http);
    if (!parsed) return usage_error(parsed.error().message);
    address = *parsed;
  }

  if (db) {
    data.mode = web::ServeMode::db;
    data.selection = opt.report.db;
    data.files = {opt.report.db.db};
    progress("reading the database " + opt.report.db.db + " and symbolizing");
    auto profile = read_report_profile("", opt.report);
    if (!profile) return report(profile.error());
    data.profiles.push_back(std::move(*profile));
    const SymbolizeFlags symbolize = opt.report.symbolize;
    data.load_selection = [symbolize](const store::Selection& selection) {
      return read_db_selection(selection, symbolize);
    };
  } else {
    data.mode = opt.files.size() == 2 ? web::ServeMode::compare : web::ServeMode::single;
    data.files = opt.files;
    for (const std::string& file : opt.files) {
      progress("reading " + file + " and symbolizing");
      auto profile = read_report_profile(file, opt.report);
      if (!profile) return report(profile.error());
      data.profiles.push_back(std::move(*profile));
    }
  }
  data.inlines = !opt.report.no_inlines;
  data.source_path = opt.source_path;
  data.trim_path = opt.trim_path;
  data.binary_paths = opt.report.symbolize.binary_paths;
  data.debuginfod.enabled = !opt.report.symbolize.no_debuginfod;

  // SIGINT and SIGTERM are taken by one thread (sigwait), which stops the server: blocked
  // here, before the server's threads exist, so that they inherit the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  web::Api api(std::move(data));
  web::Server server(api);
  auto port = server.bind(address.host, address.port, /*next_free=*/!explicit_address);
  if (!port) return report(port.error());
  const std::string url = server.url();
  std::printf("tally serve: %s\n", url.c_str());
  std::fflush(stdout);
  progress("press Ctrl-C to stop");

  std::thread stopper([&server, stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server.stop();
  });
  if (!opt.no_browser && isatty(STDOUT_FILENO)) open_browser(url);
  const bool listened = server.run();
  // The stopper may still wait for a signal: give it one, so that it ends before `server` does.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  if (!listened)
    return report(core::Error{"the server stopped: cannot accept connections", core::ErrorKind::io});
  return kOk;
}

}  // namespace

void add_serve_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<ServeCommandOptions>();
  CLI::App* cmd = app.add_subcommand("serve", kServeDescription);
  cmd->add_option("--http", opt->http,
                  "HOST:PORT to listen on (port 0: any free port); default 127.0.0.1:8080 or "
                  "the next free port. An address other than loopback exposes the profile to "
                  "the network");
  cmd->add_flag("--no-browser", opt->no_browser, "do not open a browser");
  cmd->add_flag("--no-inlines", opt->report.no_inlines,
                "attribute inlined code to the function it was inlined into");
  cmd->add_option("--source-path", opt->source_path,
                  "':'-separated directories to look for source files in (as tally list)");
  cmd->add_option("--trim-path", opt->trim_path,
                  "':'-separated path prefixes to remove from the profile's file names");
  add_symbolize_flags(cmd, opt->report.symbolize, "local");
  add_db_flags(cmd, opt->report.db);
  cmd->add_option("FILE", opt->files, "a profile, or two to compare (BASE NEW)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_serve(*opt); }; });
}

}  // namespace tally::cli
