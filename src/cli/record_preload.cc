#include "cli/record_preload.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/merge.h"
#include "formats/format.h"
#include "io/input.h"

extern char** environ;

namespace tally::cli {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxFrequency = 100'000;  // libtally's limit (perf's 10 us hrtimer floor)
constexpr const char* kProfileName = "profile";

core::Error io_error(std::string message) { return {std::move(message), core::ErrorKind::io}; }

// A private directory for the profiles, removed when done.
class ScratchDirectory {
 public:
  static core::Expected<ScratchDirectory> create() {
    std::string pattern = (fs::temp_directory_path() / "tally-preload-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return io_error(fmt::format("cannot create a directory for the profiles ({}): {}", pattern,
                                  std::strerror(errno)));
    }
    return ScratchDirectory(pattern);
  }
  ScratchDirectory(ScratchDirectory&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  ScratchDirectory& operator=(ScratchDirectory&&) = delete;
  ~ScratchDirectory() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit ScratchDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// This environment with the profiler's variables set (and a CPUPROFILESIGNAL of ours
// removed: with it set, profiling would wait for the signal).
std::vector<std::string> child_environment(const PreloadRecordOptions& options,
                                           const std::string& library,
                                           const std::string& profile) {
  std::vector<std::string> variables;
  std::string preload = library;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry = *e;
    std::string_view name = entry.substr(0, entry.find('='));
    if (name == "LD_PRELOAD") {
      std::string_view existing = entry.substr(entry.find('=') + 1);
      if (!existing.empty()) preload += ":" + std::string(existing);
      continue;
    }
    if (name == "CPUPROFILE" || name == "CPUPROFILE_FREQUENCY" || name == "CPUPROFILE_REALTIME" ||
        name == "CPUPROFILESIGNAL") {
      continue;
    }
    variables.emplace_back(entry);
  }
  variables.push_back("LD_PRELOAD=" + preload);
  variables.push_back("CPUPROFILE=" + profile);
  variables.push_back(fmt::format("CPUPROFILE_FREQUENCY={}", options.frequency));
  if (options.wall_clock) variables.push_back("CPUPROFILE_REALTIME=1");
  return variables;
}

// Reads one process's profile and labels its samples with the process id.
core::Expected<core::Profile> read_process_profile(const std::string& path, int64_t pid,
                                                   core::Diagnostics& diagnostics) {
  auto input = io::Input::open(path);
  if (!input) return input.error();
  auto profile = formats::read_profile(std::move(*input), diagnostics);
  if (!profile) return profile.error();
  core::Profile& p = *profile;
  std::vector<std::vector<core::LocationId>> stacks;
  std::vector<std::vector<int64_t>> values;
  std::vector<std::vector<core::Label>> labels;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    stacks.emplace_back(p.stack(i).begin(), p.stack(i).end());
    values.emplace_back(p.values(i).begin(), p.values(i).end());
    labels.emplace_back(p.labels(i).begin(), p.labels(i).end());
  }
  core::Label process{p.intern("pid"), 0, pid, 0};
  p.clear_samples();
  for (size_t i = 0; i < stacks.size(); ++i) {
    labels[i].push_back(process);
    p.add_sample(stacks[i], values[i], labels[i]);
  }
  return std::move(p);
}

}  // namespace

core::Expected<std::string> find_runtime_library() {
  if (const char* chosen = std::getenv("TALLY_RUNTIME_LIBRARY"); chosen != nullptr && *chosen) {
    if (access(chosen, R_OK) == 0) return std::string(chosen);
    return io_error(fmt::format("TALLY_RUNTIME_LIBRARY={}: {}", chosen, std::strerror(errno)));
  }
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  std::vector<fs::path> candidates;
  if (!error) {
    fs::path bin = self.parent_path();
    for (const char* relative : {"../lib/libtally.so", "../lib64/libtally.so",
                                 "../lib/x86_64-linux-gnu/libtally.so",
                                 "../lib/aarch64-linux-gnu/libtally.so", "libtally.so",
                                 "../runtime/libtally.so"}) {  // the last: the build tree
      candidates.push_back(bin / relative);
    }
  }
  for (const fs::path& candidate : candidates) {
    if (access(candidate.c_str(), R_OK) == 0) return fs::weakly_canonical(candidate).string();
  }
  std::string looked;
  for (const fs::path& candidate : candidates) looked += "\n  " + candidate.lexically_normal().string();
  return core::Error{"libtally.so not found; set TALLY_RUNTIME_LIBRARY (looked in:" + looked + ")",
                     core::ErrorKind::unsupported};
}

core::Expected<PreloadRecordResult> record_with_preload(const PreloadRecordOptions& options,
                                                        core::Diagnostics& diagnostics) {
  if (options.command.empty()) return core::Error{"no command to record", core::ErrorKind::unsupported};
  std::string library = options.library;
  if (library.empty()) {
    auto found = find_runtime_library();
    if (!found) return found.error();
    library = *found;
  }
  PreloadRecordOptions settings = options;
  settings.frequency = std::clamp<uint64_t>(options.frequency, 1, kMaxFrequency);
  auto scratch = ScratchDirectory::create();
  if (!scratch) return scratch.error();
  const std::string profile = scratch->path() + "/" + kProfileName;

  std::vector<std::string> variables = child_environment(settings, library, profile);
  std::vector<char*> envp;
  for (std::string& v : variables) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const std::string& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // The child reports a failed exec through a close-on-exec pipe.
  int exec_status[2];
  if (pipe2(exec_status, O_CLOEXEC) != 0) return io_error(fmt::format("pipe: {}", std::strerror(errno)));
  auto started = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) return io_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    close(exec_status[0]);
    execvpe(argv[0], argv.data(), envp.data());
    int error = errno;
    ssize_t ignored = write(exec_status[1], &error, sizeof error);
    (void)ignored;
    _exit(127);
  }
  close(exec_status[1]);
  int exec_error = 0;
  ssize_t got;
  do {
    got = read(exec_status[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  close(exec_status[0]);

  PreloadRecordResult result;
  int status = 0;
  while (wait4(pid, &status, 0, &result.usage) < 0 && errno == EINTR) {
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (got == static_cast<ssize_t>(sizeof exec_error)) {
    return core::Error{fmt::format("cannot run {}: {}", options.command[0], std::strerror(exec_error)),
                       core::ErrorKind::unsupported};
  }
  result.signaled = WIFSIGNALED(status);
  result.status = result.signaled ? WTERMSIG(status) : WEXITSTATUS(status);

  // The command's profile first (its process id is the child's), then its children's
  // (PATH.PID), in order of process id.
  std::vector<std::pair<int64_t, std::string>> files;
  std::vector<std::pair<int64_t, std::string>> children;
  for (const auto& entry : fs::directory_iterator(scratch->path())) {
    std::string name = entry.path().filename().string();
    if (name == kProfileName) {
      files.emplace_back(pid, entry.path().string());
    } else if (name.starts_with(std::string(kProfileName) + ".")) {
      std::string digits = name.substr(std::strlen(kProfileName) + 1);
      if (!digits.empty() && std::all_of(digits.begin(), digits.end(), ::isdigit)) {
        children.emplace_back(std::stoll(digits), entry.path().string());
      }
    }
  }
  std::sort(children.begin(), children.end());
  files.insert(files.end(), children.begin(), children.end());
  if (files.empty() || files.front().first != pid) {
    return core::Error{
        result.signaled
            ? fmt::format("{} was killed by signal {} before libtally could write its profile",
                          options.command[0], result.status)
            : fmt::format("{} wrote no profile (is it statically linked, or setuid? libtally "
                          "cannot be preloaded there)",
                          options.command[0]),
        core::ErrorKind::unsupported};
  }

  std::vector<core::Profile> profiles;
  for (const auto& [process, path] : files) {
    auto read = read_process_profile(path, process, diagnostics);
    if (!read) {
      diagnostics.warn(fmt::format("process {}: {}", process, read.error().message));
      continue;
    }
    profiles.push_back(std::move(*read));
  }
  result.processes = static_cast<int>(profiles.size());
  if (profiles.size() == 1) {
    result.profile = std::move(profiles.front());
  } else {
    std::vector<const core::Profile*> parts;
    for (const core::Profile& p : profiles) parts.push_back(&p);
    auto merged = core::merge_profiles(parts, diagnostics);
    if (!merged) return merged.error();
    result.profile = std::move(*merged);
  }
  result.profile.duration_nanos = static_cast<int64_t>(result.seconds * 1e9);
  result.profile.comments.push_back(result.profile.intern(
      fmt::format("recorded in-process by libtally ({}), {} Hz of {} time, {} process(es)", library,
                  settings.frequency, settings.wall_clock ? "wall-clock" : "CPU", result.processes)));
  return result;
}

}  // namespace tally::cli
