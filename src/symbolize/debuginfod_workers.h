// Requests to the debuginfod servers run at once in worker processes, each with its own
// libdebuginfod client, one request after the other.
//
// Processes, not threads: libdebuginfod 0.188 (Debian 12) closes a file descriptor twice
// on each request once its cache exists (debuginfod_config_cache: fclose(), then
// close() of the same descriptor), which, with requests on several threads, closes
// whatever another thread has just opened under that number: its download, its socket.
// 100 runs of 16 build ids on 8 threads (one client each) from a local server: 3 runs
// ended with a file missing (EIO) or holding another build id's file. A process only
// closes its own, already closed, descriptor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "symbolize/debuginfod_client.h"

namespace tally::symbolize {

struct DebuginfodRequest {
  std::string build_id;
  DebuginfodFile file = DebuginfodFile::debuginfo;
};

// What the workers report as they go (called on the calling thread).
struct DebuginfodEvents {
  std::function<void(unsigned worker, size_t request)> started;
  std::function<void(unsigned worker, uint64_t received, uint64_t size)> progress;
  std::function<void(unsigned worker)> finished;
};

// A failure that says the server itself is not there or not answering: the other
// requests would fail the same way, each after its own wait.
bool server_failed(const DebuginfodFetch& fetch);

// Runs `requests` on `workers` processes; a request gives up after `timeout_seconds`
// with less than 100 KB coming in (DebuginfodClient::fetch). Once one fails for the
// server (server_failed), the requests under way are given up and the others not made:
// their results are nullopt. A worker that goes quiet for longer than the timeout allows
// is killed, its request counted as timed out.
std::vector<std::optional<DebuginfodFetch>> fetch_in_workers(
    const std::vector<DebuginfodRequest>& requests, unsigned workers, double timeout_seconds,
    const DebuginfodEvents& events);

}  // namespace tally::symbolize
