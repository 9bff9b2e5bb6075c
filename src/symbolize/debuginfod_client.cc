#include "symbolize/debuginfod_client.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace tally::symbolize {

namespace {

struct Library {
  decltype(&::debuginfod_begin) begin = nullptr;
  decltype(&::debuginfod_end) end = nullptr;
  decltype(&::debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&::debuginfod_find_executable) find_executable = nullptr;
  decltype(&::debuginfod_set_progressfn) set_progressfn = nullptr;
  decltype(&::debuginfod_set_user_data) set_user_data = nullptr;
  decltype(&::debuginfod_get_user_data) get_user_data = nullptr;
  decltype(&::debuginfod_get_url) get_url = nullptr;
  std::string error;
};

template <typename Function>
bool resolve(void* library, const char* name, Function& out) {
  out = reinterpret_cast<Function>(::dlsym(library, name));
  return out != nullptr;
}

Library load_library() {
  Library lib;
  void* handle = ::dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    lib.error = std::string("cannot load ") + DEBUGINFOD_SONAME + " (Debian: libdebuginfod1): " +
                (why ? why : "unknown");
    return lib;
  }
  if (!resolve(handle, "debuginfod_begin", lib.begin) ||
      !resolve(handle, "debuginfod_end", lib.end) ||
      !resolve(handle, "debuginfod_find_debuginfo", lib.find_debuginfo) ||
      !resolve(handle, "debuginfod_find_executable", lib.find_executable) ||
      !resolve(handle, "debuginfod_set_progressfn", lib.set_progressfn) ||
      !resolve(handle, "debuginfod_set_user_data", lib.set_user_data) ||
      !resolve(handle, "debuginfod_get_user_data", lib.get_user_data) ||
      !resolve(handle, "debuginfod_get_url", lib.get_url))
    lib.error = std::string(DEBUGINFOD_SONAME) + " lacks a function tally calls";
  return lib;  // stays loaded: libcurl's global state lives until exit
}

const Library& library() {
  static const Library loaded = load_library();
  return loaded;
}

// libcurl's low-speed rule, which libdebuginfod applies with $DEBUGINFOD_TIMEOUT: a
// transfer must bring this much per timeout.
constexpr uint64_t kMinBytesPerTimeout = 100 * 1024;

using Clock = std::chrono::steady_clock;

// One request's state, which the progress callback reads and updates.
struct Request {
  double timeout_seconds = 0;
  const std::atomic<bool>* cancel = nullptr;
  const DebuginfodClient::OnProgress* on_progress = nullptr;
  Clock::time_point window_start;  // the last time kMinBytesPerTimeout had come in
  uint64_t window_bytes = 0;       // what had come in by then
  bool timed_out = false, cancelled = false;
};

// Returns non-zero to make the library give the request up.
int on_library_progress(debuginfod_client* client, long a, long b) {
  auto* request = static_cast<Request*>(library().get_user_data(client));
  if (request == nullptr) return 0;
  // Until the body comes (the library then knows the server's URL), `a` counts the
  // library's waits, not bytes.
  const bool receiving = library().get_url(client) != nullptr;
  const uint64_t received = receiving && a > 0 ? static_cast<uint64_t>(a) : 0;
  if (*request->on_progress)
    (*request->on_progress)(received, receiving && b > 0 ? static_cast<uint64_t>(b) : 0);
  if (request->cancel->load(std::memory_order_relaxed)) {
    request->cancelled = true;
    return 1;
  }
  const auto now = Clock::now();
  if (received >= request->window_bytes + kMinBytesPerTimeout) {
    request->window_start = now;
    request->window_bytes = received;
  } else if (request->timeout_seconds > 0 &&
             std::chrono::duration<double>(now - request->window_start).count() >=
                 request->timeout_seconds) {
    request->timed_out = true;
    return 1;
  }
  return 0;
}

}  // namespace

// As libdebuginfod decides (debuginfod_find_debuginfo(3), "CACHE").
std::string debuginfod_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  if (std::string path = env(DEBUGINFOD_CACHE_PATH_ENV_VAR); !path.empty()) return path;
  const std::string home = env("HOME").empty() ? "/" : env("HOME");
  const std::string legacy = home + "/.debuginfod_client_cache";
  struct stat st;
  if (::stat(legacy.c_str(), &st) == 0) return legacy;
  const std::string xdg = env("XDG_CACHE_HOME");
  return (xdg.empty() ? home + "/.cache" : xdg) + "/debuginfod_client";
}

std::string make_debuginfod_cache_dir() {
  const std::string dir = debuginfod_cache_dir();
  // Each missing directory from the top down (libdebuginfod makes the last one only).
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string prefix = dir.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot make the cache directory " + prefix + ": " + std::strerror(errno);
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "the cache " + dir + " is not a directory";
  return {};
}

namespace {

// libdebuginfod 0.188 takes a request its progress callback gave up for a "not found"
// and leaves an empty file in the cache, which answers "not found" for the next 10
// minutes without asking the server: a slow server would look like one without the file.
void forget_cached_miss(const std::string& build_id, DebuginfodFile file) {
  const std::string dir = debuginfod_cache_dir() + "/" + build_id;
  const std::string path = dir + (file == DebuginfodFile::debuginfo ? "/debuginfo" : "/executable");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());  // only when nothing else is cached for the build id
  }
}

}  // namespace

std::string debuginfod_urls() {
  const char* urls = std::getenv(DEBUGINFOD_URLS_ENV_VAR);
  return urls ? urls : "";
}

const std::string& debuginfod_load_error() { return library().error; }

double debuginfod_timeout_seconds() {
  const char* value = std::getenv(DEBUGINFOD_TIMEOUT_ENV_VAR);
  if (value == nullptr || *value == '\0') return kDefaultDebuginfodTimeoutSeconds;
  char* end = nullptr;
  const double seconds = std::strtod(value, &end);
  if (*end != '\0' || !(seconds >= 0)) return kDefaultDebuginfodTimeoutSeconds;
  return seconds;
}

DebuginfodClient::DebuginfodClient() {
  const Library& lib = library();
  if (!lib.error.empty()) return;
  client_ = lib.begin();
  if (client_ != nullptr) lib.set_progressfn(client_, on_library_progress);
}

DebuginfodClient::~DebuginfodClient() {
  if (client_ != nullptr) library().end(client_);
}

DebuginfodFetch DebuginfodClient::fetch(const std::string& build_id, DebuginfodFile file,
                                        double timeout_seconds, const std::atomic<bool>& cancel,
                                        const OnProgress& on_progress) {
  DebuginfodFetch result;
  if (client_ == nullptr) {
    result.error = ENOSYS;
    return result;
  }
  const Library& lib = library();
  Request request;
  request.timeout_seconds = timeout_seconds;
  request.cancel = &cancel;
  request.on_progress = &on_progress;
  request.window_start = Clock::now();
  lib.set_user_data(client_, &request);
  char* path = nullptr;
  const auto* id = reinterpret_cast<const unsigned char*>(build_id.c_str());
  const int fd = file == DebuginfodFile::debuginfo ? lib.find_debuginfo(client_, id, 0, &path)
                                                   : lib.find_executable(client_, id, 0, &path);
  lib.set_user_data(client_, nullptr);
  // The URL is known once a server sent the body: a file from the cache has none.
  const char* url = lib.get_url(client_);
  if (fd >= 0) {
    struct stat st;
    if (::fstat(fd, &st) == 0) result.bytes = static_cast<uint64_t>(st.st_size);
    ::close(fd);
    result.path = path ? path : "";
    result.downloaded = url != nullptr;
    if (url != nullptr) result.url = url;
  } else {
    result.error = -fd;
    result.timed_out = request.timed_out;
    result.cancelled = request.cancelled;
    if (result.timed_out || result.cancelled) forget_cached_miss(build_id, file);
  }
  std::free(path);
  return result;
}

}  // namespace tally::symbolize
