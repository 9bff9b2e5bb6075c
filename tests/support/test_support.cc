#include "support/test_support.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

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

std::string read_text(const std::string& path) {
  auto b = read_bytes(path);
  return {b.begin(), b.end()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

RunResult run(const std::vector<std::string>& argv, const std::string& input,
              const std::string& cwd) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe(in_pipe) || pipe(out_pipe) || pipe(err_pipe)) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
    posix_spawn_file_actions_addclose(&fa, fd);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  // Feed stdin and drain stdout/stderr together so that neither side blocks.
  RunResult r;
  size_t fed = 0;
  int in_fd = in_pipe[1];
  if (input.empty()) {
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
    if (poll(fds, static_cast<nfds_t>(n), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto drain = [&](int idx, int fd, std::string& into, bool& open) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t got = read(fd, buf, sizeof buf);
      if (got <= 0) open = false;
      else into.append(buf, static_cast<size_t>(got));
    };
    drain(out_i, out_pipe[0], r.out, out_open);
    drain(err_i, err_pipe[0], r.err, err_open);
    if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = write(in_fd, input.data() + fed, input.size() - fed);
      if (put > 0) fed += static_cast<size_t>(put);
      if (put < 0 && errno != EAGAIN) fed = input.size();
      if (fed == input.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

RunResult run_tally(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> argv{tally_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, input);
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
