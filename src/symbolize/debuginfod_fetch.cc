#include "symbolize/debuginfod_fetch.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/path_name.h"
#include "symbolize/debuginfod_client.h"
#include "symbolize/debuginfod_workers.h"
#include "symbolize/elf_image.h"

namespace tally::symbolize {

namespace {

// One file to fetch, for every binary that wants it.
struct Wanted {
  std::string build_id;
  DebuginfodFile kind = DebuginfodFile::debuginfo;
  std::string name;  // the first binary's file name, for the messages
  std::vector<FoundBinary*> binaries;
  DebuginfodFetch fetched;
  bool skipped = false;  // not asked, or given up: the server had failed
  std::string unusable;  // why the file fetched does not fit ("" when it does)
};

// "7.1 kB", "12.3 MB".
std::string size_text(uint64_t bytes) {
  const auto size = static_cast<double>(bytes);
  return bytes < 1000000 ? fmt::format("{:.1f} kB", size / 1e3)
                         : fmt::format("{:.1f} MB", size / 1e6);
}

// "prog 4f1e...", or "prog 4f1e... (binary)" for an executable.
std::string describe(const Wanted& w) {
  return fmt::format("{} {}{}", w.name, w.build_id,
                     w.kind == DebuginfodFile::executable ? " (binary)" : "");
}

std::string list(const std::vector<const Wanted*>& items) {
  std::string text;
  for (const Wanted* w : items) text += (text.empty() ? "" : ", ") + describe(*w);
  return text;
}

// "1 build id", "3 build ids"; "files" when binaries are fetched as well as debug files.
std::string count(size_t n, bool files) {
  return fmt::format("{} {}{}", n, files ? "file" : "build id", n == 1 ? "" : "s");
}

bool any_binary(const std::vector<const Wanted*>& items) {
  return std::any_of(items.begin(), items.end(),
                     [](const Wanted* w) { return w->kind == DebuginfodFile::executable; });
}

std::string count(const std::vector<const Wanted*>& items) {
  return count(items.size(), any_binary(items));
}

// The server part of a download's URL ("http://host:port" of ".../buildid/ID/debuginfo").
std::string server_of(const std::string& url) {
  const auto at = url.find("/buildid/");
  return at == std::string::npos ? url : url.substr(0, at);
}

// "debuginfod: fetching 3 of 7 build ids (libLLVM-14.so.1 12.3 MB)" on stderr, rewritten
// in place as the downloads go, when stderr is a terminal. Nothing is drawn in the first
// quarter second: files from the cache come and go without a flicker.
class ProgressLine {
 public:
  ProgressLine(size_t total, bool files, unsigned workers)
      : shown_(::isatty(STDERR_FILENO) == 1), total_(total), files_(files), slots_(workers),
        begin_(Clock::now()) {}
  ~ProgressLine() {
    if (drawn_) std::fputs("\r\033[K", stderr);
  }
  void started(unsigned worker, const std::string& name) {
    ++started_;
    slots_[worker] = {name, 0, 0, true};
    draw();
  }
  void progress(unsigned worker, uint64_t received, uint64_t size) {
    slots_[worker].received = received;
    slots_[worker].size = size;
    draw();
  }
  void finished(unsigned worker) {
    slots_[worker].active = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Slot {
    std::string name;
    uint64_t received = 0, size = 0;
    bool active = false;
  };
  void draw() {
    if (!shown_) return;
    const auto now = Clock::now();
    if (now - begin_ < std::chrono::milliseconds(250)) return;
    if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
    // The download furthest along names the line.
    const Slot* biggest = nullptr;
    for (const Slot& slot : slots_)
      if (slot.active && slot.received > 0 && (!biggest || slot.received > biggest->received))
        biggest = &slot;
    std::string line = fmt::format("debuginfod: fetching {} of {}", started_, count(total_, files_));
    if (biggest) {
      line += " (" + biggest->name + " " + size_text(biggest->received);
      if (biggest->size > 0) line += " of " + size_text(biggest->size);
      line += ")";
    }
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
    last_ = now;
  }

  const bool shown_;
  const size_t total_;
  const bool files_;
  std::vector<Slot> slots_;  // per worker: the request it runs
  size_t started_ = 0;
  Clock::time_point begin_, last_;
  bool drawn_ = false;
};

// Whether the fetched file is what was asked for: the build id, and DWARF in a debug file.
std::string unusable_reason(const Wanted& w) {
  auto image = ElfImage::open(w.fetched.path);
  if (!image) return "not an ELF file";
  const std::string id = image->build_id();
  if (!id.empty() && id != w.build_id) return "it has build id " + id;
  if (w.kind == DebuginfodFile::debuginfo && !image->has_dwarf()) return "it has no DWARF";
  return {};
}

void report(const std::vector<Wanted>& wanted, const std::string& urls, double timeout,
            core::Diagnostics& diagnostics) {
  std::vector<const Wanted*> missing, not_asked;
  std::map<std::string, std::vector<const Wanted*>> servers;  // downloaded, by server
  std::map<int, std::vector<const Wanted*>> errors;           // other failures, by errno
  const Wanted* failed = nullptr;  // the first that found the server failing
  uint64_t bytes = 0;
  for (const Wanted& w : wanted) {
    const DebuginfodFetch& f = w.fetched;
    if (!f.path.empty()) {
      if (f.downloaded) {
        servers[server_of(f.url)].push_back(&w);
        bytes += f.bytes;
      }
      if (!w.unusable.empty())
        diagnostics.warn(fmt::format("debuginfod: {} ({}) is not used: {}", describe(w), f.path,
                                     w.unusable));
    } else if (w.skipped || f.cancelled) {
      not_asked.push_back(&w);
    } else if (server_failed(f)) {
      if (!failed) failed = &w;
      not_asked.push_back(&w);
    } else if (f.error == ENOENT) {
      missing.push_back(&w);
    } else {
      errors[f.error].push_back(&w);
    }
  }
  for (const auto& [server, items] : servers) {
    const bool several = servers.size() > 1;
    diagnostics.warn(fmt::format("debuginfod: fetched {}{} from {}: {}", count(items),
                                 several ? "" : " (" + size_text(bytes) + ")", server,
                                 list(items)));
  }
  if (!missing.empty())
    diagnostics.warn(fmt::format("debuginfod: not on the server (404): {}: {}",
                                 count(missing), list(missing)));
  if (!not_asked.empty()) {
    const std::string why =
        !failed ? std::string("gave up")
        : failed->fetched.timed_out
            ? fmt::format("no answer within {:g} s; DEBUGINFOD_TIMEOUT sets the wait", timeout)
            : std::strerror(failed->fetched.error);
    diagnostics.warn(fmt::format("debuginfod: cannot reach {} ({}): {} not fetched: {}", urls, why,
                                 count(not_asked), list(not_asked)));
  }
  for (const auto& [error, items] : errors)
    diagnostics.warn(fmt::format("debuginfod: {}: {} not fetched: {}", std::strerror(error),
                                 count(items), list(items)));
}

}  // namespace

void fetch_missing_files(std::span<FoundBinary* const> binaries, const DebuginfodOptions& options,
                         core::Diagnostics& diagnostics) {
  if (!options.enabled) return;
  const std::string urls = debuginfod_urls();
  if (urls.find_first_not_of(" \t") == std::string::npos) return;

  // Each (build id, file) once, in the order of `binaries`.
  std::vector<Wanted> wanted;
  std::map<std::pair<std::string, DebuginfodFile>, size_t> index;
  auto want = [&](FoundBinary* binary, DebuginfodFile kind) {
    auto [it, added] = index.try_emplace({binary->build_id, kind}, wanted.size());
    if (added) wanted.push_back({binary->build_id, kind, std::string(core::base_name(binary->file)), {}, {}, false, {}});
    wanted[it->second].binaries.push_back(binary);
  };
  for (FoundBinary* binary : binaries) {
    if (binary->build_id.empty()) continue;
    if (binary->debug.empty()) want(binary, DebuginfodFile::debuginfo);
    if (binary->binary.empty()) want(binary, DebuginfodFile::executable);
  }
  if (wanted.empty()) return;
  if (const std::string& error = debuginfod_load_error(); !error.empty()) {
    diagnostics.warn("debuginfod: DEBUGINFOD_URLS is set but " + error);
    return;
  }
  if (const std::string error = make_debuginfod_cache_dir(); !error.empty()) {
    diagnostics.warn("debuginfod: " + error + "; nothing fetched");
    return;
  }

  const double timeout =
      options.timeout_seconds > 0 ? options.timeout_seconds : debuginfod_timeout_seconds();
  const auto workers =
      static_cast<unsigned>(std::min<size_t>(std::max(1u, options.parallel), wanted.size()));
  std::vector<DebuginfodRequest> requests;
  for (const Wanted& w : wanted) requests.push_back({w.build_id, w.kind});
  std::vector<std::optional<DebuginfodFetch>> fetched;
  {
    const bool files = std::any_of(wanted.begin(), wanted.end(), [](const Wanted& w) {
      return w.kind == DebuginfodFile::executable;
    });
    ProgressLine progress(wanted.size(), files, workers);
    DebuginfodEvents events;
    events.started = [&](unsigned worker, size_t i) { progress.started(worker, wanted[i].name); };
    events.progress = [&](unsigned worker, uint64_t received, uint64_t size) {
      progress.progress(worker, received, size);
    };
    events.finished = [&](unsigned worker) { progress.finished(worker); };
    fetched = fetch_in_workers(requests, workers, timeout, events);
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (fetched[i]) {
      wanted[i].fetched = std::move(*fetched[i]);
    } else {
      wanted[i].skipped = true;
    }
  }

  for (Wanted& w : wanted) {
    if (w.fetched.path.empty()) continue;
    w.unusable = unusable_reason(w);
    if (!w.unusable.empty()) continue;
    for (FoundBinary* binary : w.binaries) {
      if (w.kind == DebuginfodFile::debuginfo) {
        binary->debug = w.fetched.path;
      } else {
        binary->binary = w.fetched.path;
        binary->problem.clear();
      }
      if (binary->key.empty()) binary->key = w.build_id;
    }
  }
  report(wanted, urls, timeout, diagnostics);
}

}  // namespace tally::symbolize
