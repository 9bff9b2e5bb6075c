// The daemon's loop once everything is open: reads the rings, answers the control socket,
// flushes into the database and hands each push interval to the pusher on time, and at the
// end drains the rings, flushes and pushes what is left.
#pragma once

#include <csignal>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collect/sampler.h"
#include "core/error.h"
#include "daemon/collector.h"
#include "daemon/control.h"
#include "daemon/log.h"
#include "daemon/options.h"
#include "daemon/packing_worker.h"
#include "daemon/push_interval.h"
#include "daemon/push_symbolizer.h"
#include "daemon/pusher.h"
#include "store/database.h"

namespace tally::daemon {

// What the daemon needs to push; all null without --push.
struct PushPath {
  std::unique_ptr<PushInterval> interval;
  std::unique_ptr<Pusher> pusher;
  std::string host;
  // Kept across intervals (used by one packing thread at a time).
  std::unique_ptr<PushSymbolizer> symbolizer;
};

class RunLoop {
 public:
  // `db` null: push only (--push without --db). `stop` becomes non-zero on SIGTERM / SIGINT.
  RunLoop(Log& log, store::Database* db, std::string epoch, collect::Sampler& sampler,
          store::Aggregate& aggregate, Collector& collector, const Options& options,
          PushPath& push, const volatile std::sig_atomic_t& stop);

  // Until `stop` (or the rings cannot be read); an error when the last flush failed.
  core::Status run(ControlServer& control);

 private:
  // Flushes what is in memory; the text for the log and the control client.
  core::Expected<std::string> flush(const char* why);
  // Spools the interval's profiles for the pusher; the text for the log.
  std::string push(const char* why);
  void finish_packing();  // waits for the interval being symbolized and spooled
  void handle(ControlServer::Request& request);
  std::string status() const;
  std::string base_status() const;

  Log& log_;
  store::Database* db_;
  std::string epoch_;
  collect::Sampler& sampler_;
  store::Aggregate& aggregate_;
  Collector& collector_;
  const Options& options_;
  store::MachineInfo machine_;
  PushPath& push_;
  const volatile std::sig_atomic_t& stop_;
  uint64_t next_flush_ns_ = 0;
  uint64_t flushed_samples_ = 0;
  uint64_t started_ns_ = 0;
  uint64_t next_push_ns_ = 0;
  int64_t push_started_unix_ns_ = 0;
  uint64_t pushed_samples_ = 0;
  std::unique_ptr<PackingWorker> packing_;  // with --push
};

}  // namespace tally::daemon
