// One file from the debuginfod servers of $DEBUGINFOD_URLS, through elfutils' own client
// library (libdebuginfod, with its cache: $DEBUGINFOD_CACHE_PATH, else its default). The
// library is opened with dlopen when first needed, not linked: it brings libcurl and its
// TLS, HTTP/2, SSH and LDAP libraries, which every tally command would otherwise load at
// start for nothing (an empty C program linked with it: 34 shared objects instead of 3,
// peak RSS 7.6 MB instead of 1.0 MB, start 16.9 ms instead of 1.6 ms).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

struct debuginfod_client;

namespace tally::symbolize {

// $DEBUGINFOD_URLS, "" when unset.
std::string debuginfod_urls();

// libdebuginfod's cache: $DEBUGINFOD_CACHE_PATH, else its default in $HOME.
std::string debuginfod_cache_dir();
// Makes the cache directory and those above it; why it could not, "" when done. (The
// library makes the last one only, and says ENOENT, as for a file no server has, when a
// directory above it is missing.)
std::string make_debuginfod_cache_dir();

// Why libdebuginfod cannot be used, "" when it can (loaded on the first call).
const std::string& debuginfod_load_error();

// The seconds a request may go without data before it is given up: $DEBUGINFOD_TIMEOUT
// when set (0: no limit, as for libdebuginfod), else ours, shorter than the library's 90 s.
constexpr double kDefaultDebuginfodTimeoutSeconds = 10;
double debuginfod_timeout_seconds();

enum class DebuginfodFile { debuginfo, executable };

struct DebuginfodFetch {
  std::string path;  // the file in the cache; "" when not fetched
  int error = 0;     // errno when not fetched: ENOENT is "the servers do not have it"
  bool timed_out = false;  // given up: less than 100 KB came in the timeout
  bool cancelled = false;  // given up because `cancel` was set
  bool downloaded = false;  // from a server, not from the cache
  std::string url;          // where it was downloaded from
  uint64_t bytes = 0;       // the file's size
};

// One libdebuginfod client: one per thread, since a client is not thread-safe.
class DebuginfodClient {
 public:
  DebuginfodClient();
  ~DebuginfodClient();
  DebuginfodClient(const DebuginfodClient&) = delete;
  DebuginfodClient& operator=(const DebuginfodClient&) = delete;

  // Called as data comes in, and about once a second while none does: bytes so far and
  // the file's size (0 when not known yet).
  using OnProgress = std::function<void(uint64_t received, uint64_t size)>;

  // The file of `build_id` (lower-case hex). Gives up when less than 100 KB came in the
  // last `timeout_seconds` (0: never), or once `cancel` is set; checked about once a
  // second, as the library calls back.
  DebuginfodFetch fetch(const std::string& build_id, DebuginfodFile file, double timeout_seconds,
                        const std::atomic<bool>& cancel, const OnProgress& on_progress);

 private:
  debuginfod_client* client_ = nullptr;
};

}  // namespace tally::symbolize
