// tally daemon's settings, as the command line gave them (src/cli/daemon_command.cc parses
// and checks them; run.h runs the daemon with them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collect/perf_open.h"
#include "daemon/push_request.h"
#include "daemon/push_transport.h"

namespace tally::daemon {

// --push: where and how each interval's profiles go (absent when `url` is empty).
struct PushOptions {
  std::string url{};
  PushFormat format = PushFormat::pyroscope;
  double every_seconds = 15;
  std::string service{};      // --service: the service_name of every sample; "" per process
  std::vector<Label> labels{};  // --label pairs
  std::string spool{};        // the spool directory (DIR/spool of --db, or --spool)
  uint64_t spool_max_bytes = 64ULL << 20;
  double retry_max_seconds = 60;
};

struct Options {
  std::string db{};                 // the profile database; "" with --push only
  std::vector<std::string> events{};  // EVENT or EVENT:PERIOD; none: the default event
  uint64_t frequency = 99;          // samples per second per CPU, at least 1
  double flush_seconds = 300;       // at least 1
  collect::CallGraphMode call_graph = collect::CallGraphMode::fp;
  std::string log{};                // "" or "-": standard error
  bool idle = false;                // sample the kernel's idle loop too
  bool off_cpu = false;             // the off-cpu event (off_cpu_spans.h)
  PushOptions push{};
};

}  // namespace tally::daemon
