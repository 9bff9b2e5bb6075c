#include "collect/child_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace tally::collect {
namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

core::Expected<ChildCommand> ChildCommand::spawn(const std::vector<std::string>& argv,
                                                 const sigset_t& child_mask) {
  if (argv.empty()) return core::Error{"no command to run", core::ErrorKind::invalid_input};
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  int go[2], exec_status[2];
  if (pipe2(go, O_CLOEXEC) != 0)
    return core::Error{fmt::format("pipe: {}", std::strerror(errno)), core::ErrorKind::io};
  if (pipe2(exec_status, O_CLOEXEC) != 0) {
    int saved = errno;
    ::close(go[0]);
    ::close(go[1]);
    return core::Error{fmt::format("pipe: {}", std::strerror(saved)), core::ErrorKind::io};
  }
  pid_t pid = fork();
  if (pid < 0) {
    int saved = errno;
    for (int fd : {go[0], go[1], exec_status[0], exec_status[1]}) ::close(fd);
    return core::Error{fmt::format("cannot start '{}': fork: {}", argv[0], std::strerror(saved)),
                       core::ErrorKind::io};
  }
  if (pid == 0) {
    ::close(go[1]);
    ::close(exec_status[0]);
    char byte = 0;
    ssize_t got;
    do {
      got = ::read(go[0], &byte, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1) _exit(127);  // the parent gave up before starting us
    sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    execvp(args[0], args.data());
    int error = errno;
    ssize_t ignored = ::write(exec_status[1], &error, sizeof(error));
    (void)ignored;
    _exit(127);
  }
  ::close(go[0]);
  ::close(exec_status[1]);
  ChildCommand child;
  child.pid_ = pid;
  child.go_fd_ = go[1];
  child.exec_fd_ = exec_status[0];
  child.name_ = argv[0];
  return child;
}

ChildCommand::ChildCommand(ChildCommand&& other) noexcept
    : pid_(other.pid_),
      go_fd_(other.go_fd_),
      exec_fd_(other.exec_fd_),
      name_(std::move(other.name_)),
      exited_(other.exited_),
      exit_code_(other.exit_code_) {
  other.pid_ = -1;
  other.go_fd_ = -1;
  other.exec_fd_ = -1;
}

ChildCommand::~ChildCommand() {
  // A child never started exits by itself when the go pipe closes.
  close_fd(go_fd_);
  close_fd(exec_fd_);
  if (pid_ > 0 && !exited_) wait_exit();
}

core::Status ChildCommand::start() {
  char byte = 1;
  if (::write(go_fd_, &byte, 1) != 1)
    return core::Error{fmt::format("cannot start '{}': {}", name_, std::strerror(errno)),
                       core::ErrorKind::io};
  close_fd(go_fd_);
  int error = 0;
  ssize_t got;
  do {
    got = ::read(exec_fd_, &error, sizeof(error));
  } while (got < 0 && errno == EINTR);
  close_fd(exec_fd_);
  if (got == static_cast<ssize_t>(sizeof(error))) {
    wait_exit();
    return core::Error{fmt::format("cannot run '{}': {}", name_, std::strerror(error)),
                       core::ErrorKind::io};
  }
  return core::ok();
}

void ChildCommand::record_status(int status) {
  exited_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool ChildCommand::poll_exit() {
  if (exited_) return true;
  int status = 0;
  pid_t got = wait4(pid_, &status, WNOHANG, &usage_);
  if (got == pid_) record_status(status);
  return exited_;
}

void ChildCommand::wait_exit() {
  if (exited_ || pid_ <= 0) return;
  int status = 0;
  pid_t got;
  do {
    got = wait4(pid_, &status, 0, &usage_);
  } while (got < 0 && errno == EINTR);
  if (got == pid_) {
    record_status(status);
  } else {
    exited_ = true;
    exit_code_ = 127;
  }
}

void ChildCommand::signal(int sig) const {
  if (pid_ > 0 && !exited_) ::kill(pid_, sig);
}

}  // namespace tally::collect
