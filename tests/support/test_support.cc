#include "support/test_support.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace tally::test {

std::string shared_dir() {
  if (const char* env = std::getenv("TALLY_SHARED_DIR"); env && *env) return env;
  return TALLY_SHARED_DIR;
}

std::string shared(const std::string& relative) { return shared_dir() + "/" + relative; }

std::string tally_binary() { return TALLY_BINARY; }

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string read_text(const std::string& path) {
  auto b = read_bytes(path);
  return {b.begin(), b.end()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

namespace {

double monotonic_seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// Starts argv with `actions` applied to its file descriptors, this process's environment
// plus `environment`, in its own process group when `own_group`. Throws when it cannot.
pid_t spawn(const std::vector<std::string>& argv, const posix_spawn_file_actions_t& actions,
            const Environment& environment, bool own_group) {
  std::vector<std::string> variables;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry = *e;
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(environment.begin(), environment.end(),
                                      [&](const auto& v) { return v.first == name; });
    if (!replaced) variables.emplace_back(entry);
  }
  for (const auto& [name, value] : environment) variables.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& v : variables) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (own_group) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

}  // namespace

bool catches_signal(pid_t pid, int signal) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (!line.starts_with("SigCgt:")) continue;
    const uint64_t caught = std::stoull(line.substr(7), nullptr, 16);
    return (caught >> (signal - 1)) & 1;
  }
  return false;
}

bool wait_until_catches(pid_t pid, int signal, double timeout_seconds) {
  const double deadline = monotonic_seconds() + timeout_seconds;
  while (!catches_signal(pid, signal)) {
    if (monotonic_seconds() > deadline || kill(pid, 0) != 0) return false;
    usleep(10'000);
  }
  return true;
}

double cpu_seconds(const rusage& usage) { return seconds(usage.ru_utime) + seconds(usage.ru_stime); }

std::string RunResult::describe() const {
  std::ostringstream text;
  text << "exit " << exit_code << " signal " << signal << (timed_out ? " (timed out)" : "")
       << "\nstdout:\n" << out << "\nstderr:\n" << err;
  return text.str();
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC))
    throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, options.cwd.c_str());
  RunResult r;
  const double started = monotonic_seconds();
  pid_t pid = -1;
  try {
    pid = spawn(argv, fa, options.environment, /*own_group=*/true);
  } catch (...) {
    posix_spawn_file_actions_destroy(&fa);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      close(fd);
    throw;
  }
  posix_spawn_file_actions_destroy(&fa);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);

  // What is due at a time: the signal to send, the time limit.
  bool signal_due = options.signal_after_seconds > 0;
  bool waiting_for_output = signal_due && !options.signal_after_output.empty();
  bool waiting_for_handler = signal_due && options.signal_once_caught;
  double signal_at = started + options.signal_after_seconds;
  const double deadline = options.timeout_seconds > 0 ? started + options.timeout_seconds : 0;
  // Milliseconds until the next of them (-1: none), acting on those that have come.
  auto next_event_ms = [&]() -> int {
    double now = monotonic_seconds();
    if (waiting_for_handler && catches_signal(pid, options.signal)) {
      waiting_for_handler = false;
      signal_at = now + options.signal_after_seconds;
    }
    if (waiting_for_handler) {
      // Polled: nothing tells this process when the handler is installed.
      if (deadline > 0 && now >= deadline && !r.timed_out) {
        r.timed_out = true;
        kill(-pid, SIGKILL);
      }
      return 10;
    }
    if (signal_due && !waiting_for_output && now >= signal_at) {
      kill(pid, options.signal);
      signal_due = false;
    }
    if (deadline > 0 && now >= deadline && !r.timed_out) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
    }
    double next = -1;
    if (signal_due && !waiting_for_output) next = signal_at - now;
    if (deadline > 0 && !r.timed_out && (next < 0 || deadline - now < next)) next = deadline - now;
    return next < 0 ? -1 : static_cast<int>(next * 1000) + 1;
  };

  // Feed stdin and drain stdout/stderr together so that neither side blocks.
  size_t fed = 0;
  int in_fd = in_pipe[1];
  if (options.input.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open || in_fd >= 0) {
    pollfd fds[3];
    int n = 0;
    int out_i = -1, err_i = -1, in_i = -1;
    if (out_open) fds[out_i = n++] = {out_pipe[0], POLLIN, 0};
    if (err_open) fds[err_i = n++] = {err_pipe[0], POLLIN, 0};
    if (in_fd >= 0) fds[in_i = n++] = {in_fd, POLLOUT, 0};
    const int ready = poll(fds, static_cast<nfds_t>(n), next_event_ms());
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) continue;
    auto drain = [&](int idx, int fd, std::string& into, bool& open) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t got = read(fd, buf, sizeof buf);
      if (got <= 0) open = false;
      else into.append(buf, static_cast<size_t>(got));
    };
    drain(out_i, out_pipe[0], r.out, out_open);
    if (waiting_for_output && r.out.find(options.signal_after_output) != std::string::npos) {
      waiting_for_output = false;
      signal_at = monotonic_seconds() + options.signal_after_seconds;
    }
    drain(err_i, err_pipe[0], r.err, err_open);
    if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = write(in_fd, options.input.data() + fed, options.input.size() - fed);
      if (put > 0) fed += static_cast<size_t>(put);
      if (put < 0 && errno != EAGAIN) fed = options.input.size();
      if (fed == options.input.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
  }
  if (in_fd >= 0) close(in_fd);
  close(out_pipe[0]);
  close(err_pipe[0]);
  // The pipes close when the program ends (or when the children holding them do): wait
  // for it, still sending the signal and keeping the time limit.
  int status = 0;
  for (;;) {
    const int wait_ms = next_event_ms();
    const pid_t done = wait4(pid, &status, wait_ms < 0 ? 0 : WNOHANG, &r.usage);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (done == 0) usleep(static_cast<useconds_t>(std::min(wait_ms, 2) * 1000));
  }
  r.wall_seconds = monotonic_seconds() - started;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

RunResult run(const std::vector<std::string>& argv, const std::string& input,
              const std::string& cwd) {
  return run(argv, RunOptions{.input = input, .cwd = cwd});
}

RunResult run_tally(const std::vector<std::string>& args, const RunOptions& options) {
  std::vector<std::string> argv{tally_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, options);
}

RunResult run_tally(const std::vector<std::string>& args, const std::string& input) {
  return run_tally(args, RunOptions{.input = input});
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!log.empty()) {
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  try {
    pid_ = spawn(argv, fa, {}, /*own_group=*/false);
  } catch (...) {
    posix_spawn_file_actions_destroy(&fa);
    throw;
  }
  posix_spawn_file_actions_destroy(&fa);
}

BackgroundProcess::~BackgroundProcess() {
  if (status_ < 0) stop(SIGKILL);
}

bool BackgroundProcess::running() {
  if (status_ >= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return false;
}

void BackgroundProcess::signal(int signal) {
  if (status_ < 0) ::kill(pid_, signal);
}

int BackgroundProcess::wait() {
  if (status_ >= 0) return status_;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return status_ = 255;
  }
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return status_;
}

int BackgroundProcess::stop(int signal) {
  this->signal(signal);
  return wait();
}

void PrintTo(const TopRow& row, std::ostream* os) {
  *os << row.flat << "|" << row.flat_percent << "|" << row.sum_percent << "|" << row.cum << "|"
      << row.cum_percent << "|" << row.name;
}

std::string as_pprof_names(const std::string& text) {
  static const std::regex kOffset(R"(\[([^\]\n]+?)\+0x[0-9a-f]+\])");
  static const std::regex kCodeRange(R"(([^\s;!\[\]]+)!sub_[0-9a-f]+)");
  return std::regex_replace(std::regex_replace(text, kOffset, "[$1]"), kCodeRange, "[$1]");
}

std::vector<TopRow> ties_by_name(std::vector<TopRow> rows) {
  for (size_t begin = 0; begin < rows.size();) {
    size_t end = begin + 1;
    while (end < rows.size() && rows[end].flat == rows[begin].flat && rows[end].cum == rows[begin].cum)
      ++end;
    std::stable_sort(rows.begin() + static_cast<long>(begin), rows.begin() + static_cast<long>(end),
                     [](const TopRow& a, const TopRow& b) { return a.name < b.name; });
    begin = end;
  }
  return rows;
}

std::string ties_by_name(const std::string& tree_text) {
  // The text between the "-----...+-----" rules: a header, the column titles, then a
  // segment per node whose node line is the one with its flat column filled (its callers
  // and callees start with blanks up to the calls column).
  struct Segment {
    std::string text, values, name;  // values: "flat cum" of the node line, "" if none
  };
  std::vector<Segment> segments(1);
  std::string rule;
  std::istringstream in(tree_text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("-----")) {
      rule = line;
      segments.emplace_back();
      continue;
    }
    Segment& segment = segments.back();
    segment.text += line + "\n";
    const size_t bar = line.find("| ");
    if (bar != std::string::npos && line.substr(0, 10).find_first_not_of(' ') != std::string::npos) {
      std::istringstream columns(line.substr(0, bar));
      std::string flat, flat_percent, sum_percent, cum;
      columns >> flat >> flat_percent >> sum_percent >> cum;
      segment.values = flat + " " + cum;
      segment.name = line.substr(bar + 2);
    }
  }
  for (size_t begin = 0; begin < segments.size();) {
    size_t end = begin + 1;
    while (end < segments.size() && !segments[begin].values.empty() &&
           segments[end].values == segments[begin].values)
      ++end;
    std::stable_sort(segments.begin() + static_cast<long>(begin),
                     segments.begin() + static_cast<long>(end),
                     [](const Segment& a, const Segment& b) { return a.name < b.name; });
    begin = end;
  }
  std::string out;
  for (size_t i = 0; i < segments.size(); ++i) out += (i > 0 ? rule + "\n" : "") + segments[i].text;
  return out;
}

std::vector<TopRow> top_rows(const std::string& text) {
  std::vector<TopRow> rows;
  bool in_table = false, plus_minus = false;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find("flat  flat%") != std::string::npos) {
      in_table = true;
      plus_minus = line.find("±") != std::string::npos;
      continue;
    }
    if (!in_table) continue;
    std::istringstream fields(line);
    TopRow row;
    std::string skipped;
    fields >> row.flat >> row.flat_percent >> row.sum_percent >> row.cum >> row.cum_percent;
    if (plus_minus) fields >> skipped;
    std::getline(fields, row.name);
    const size_t name_start = row.name.find_first_not_of(' ');
    if (name_start == std::string::npos) continue;
    row.name.erase(0, name_start);
    if (!row.flat_percent.ends_with('%') || !row.sum_percent.ends_with('%') ||
        !row.cum_percent.ends_with('%'))
      continue;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string find_pprof() {
  if (const char* env = std::getenv("TALLY_PPROF"); env && *env && access(env, X_OK) == 0) return env;
  if (access("/opt/peers/pprof", X_OK) == 0) return "/opt/peers/pprof";
  return find_program("pprof");
}

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

bool peers_required() {
  const char* env = std::getenv("TALLY_REQUIRE_PEERS");
  return env && std::string(env) == "1";
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "tally-test-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

const std::vector<GperfFixture>& gperf_fixtures() {
  static const std::vector<GperfFixture> kFixtures = {
      {"split", "split"},       {"split-f100", "split"},         {"split-nofp", "split-nofp"},
      {"split-mt", "split"},    {"deep", "deep"},                {"shlib", "shlib_main"},
      {"shlib-nofp", "shlib_main-nofp"},
  };
  return kFixtures;
}

}  // namespace tally::test
