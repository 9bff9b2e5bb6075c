// The daemon's push queue: each interval's PushRequest is first written to the spool
// directory (a temporary file, fsynced, renamed into place: a kill -9 loses at most the
// interval in flight), then a worker thread sends the spooled files oldest first and
// deletes each once the store took it. An unreachable store, 5xx and 429 are retried with
// exponential backoff and jitter, the file kept; another 4xx is logged with the server's
// message and the file dropped. The spool is bounded: past --spool-max-mb the oldest
// files go, with a log line. A restarted daemon sends what an earlier one left spooled.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/error.h"
#include "daemon/push_transport.h"

namespace tally::daemon {

struct PushStats {
  uint64_t pushes = 0;         // requests the store took
  uint64_t bytes = 0;          // their bodies, before gzip
  uint64_t retries = 0;        // attempts that failed and will be tried again
  uint64_t refused = 0;        // requests the store refused for good (4xx): dropped
  uint64_t dropped_files = 0;  // requests the full spool dropped
  uint64_t dropped_samples = 0;
  uint64_t spooled_files = 0;  // waiting now
  uint64_t spooled_bytes = 0;
};

struct PusherOptions {
  std::string spool_dir{};
  uint64_t spool_max_bytes = 64ull << 20;
  double retry_base_seconds = 1;
  double retry_max_seconds = 60;
};

class Pusher {
 public:
  using Log = std::function<void(const std::string&)>;  // called from either thread

  // Creates the spool directory, counts what it holds, and starts the worker.
  static core::Expected<std::unique_ptr<Pusher>> start(PushTransport transport,
                                                       PusherOptions options, Log log);
  ~Pusher();  // stops the worker (what is spooled stays for the next start)

  // Spools one request holding `samples` samples and wakes the worker. Fails when the file
  // cannot be written (the request is then lost, and counted as dropped).
  core::Status enqueue(const std::string& message, uint64_t samples);
  // Waits up to `seconds` for the spool to empty (the daemon's exit); true if it did.
  bool drain(double seconds);
  PushStats stats() const;

 private:
  Pusher(PushTransport transport, PusherOptions options, Log log);
  void run();
  // The spool's files, oldest first (their names sort by sequence number).
  std::vector<std::string> spooled() const;
  void enforce_bound();  // with mutex_ held

  PushTransport transport_;
  PusherOptions options_;
  Log log_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  uint64_t next_sequence_ = 0;
  std::string in_flight_;  // the file the worker is sending: the bound leaves it alone
  PushStats stats_;
  std::thread worker_;
};

// The samples a spool file's name records ("<sequence>-<samples>.push").
uint64_t spooled_samples(const std::string& name);

}  // namespace tally::daemon
