// A command run under a collector (`tally stat -- CMD`, `tally record -- CMD`): forked at
// once but held before its exec until the counters are ready, so that counting covers it
// from its first instruction and nothing of tally's own start-up.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace tally::collect {

class ChildCommand {
 public:
  // Forks a child that waits for start() and then execs `argv` (searched in PATH) with the
  // signal mask `child_mask` (the caller's mask from before it blocked signals).
  static core::Expected<ChildCommand> spawn(const std::vector<std::string>& argv,
                                            const sigset_t& child_mask);
  ChildCommand(ChildCommand&& other) noexcept;
  ChildCommand& operator=(ChildCommand&&) = delete;
  ~ChildCommand();

  pid_t pid() const { return pid_; }
  // Lets the child exec and waits until it has: an error when the exec failed ("cannot run
  // 'CMD': No such file or directory"), the child then reaped.
  core::Status start();
  // Non-blocking: true once the child has exited (its status is then in exit_code()).
  bool poll_exit();
  // Blocks until the child exits.
  void wait_exit();
  bool exited() const { return exited_; }
  // The exit status, or 128 + N when killed by signal N (the shell's convention).
  int exit_code() const { return exit_code_; }
  // The CPU time the kernel accounted to the child (wait4's rusage), once it has exited.
  const rusage& usage() const { return usage_; }
  // Sends `sig` to the child while it runs (tally record forwards SIGINT / SIGTERM).
  void signal(int sig) const;

 private:
  ChildCommand() = default;
  void record_status(int status);
  pid_t pid_ = -1;
  int go_fd_ = -1;    // written to release the child
  int exec_fd_ = -1;  // the child's exec errno, or EOF when the exec succeeded (CLOEXEC)
  std::string name_;
  bool exited_ = false;
  int exit_code_ = 0;
  rusage usage_{};
};

}  // namespace tally::collect
