// A profiled thread that execs must not take a pending sampling signal into the new
// program: pending signals survive execve, handlers do not, and the default action of a
// real-time signal is to terminate (gperftools' SIGPROF has the same trap: "Profiling
// timer expired"). libtally defines the exec functions: before the real one runs, the
// thread's timer is paused and any sampling signal queued for it is taken off the queue;
// if the exec fails, sampling resumes. All of it is async-signal-safe, as exec is.
// (Other threads need nothing: they and their pending signals end with the exec.
// posix_spawn, system and popen exec in a new process that starts with nothing pending.)
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>

#include "runtime/sampler.h"
#include "runtime/thread_registry.h"

namespace tally::runtime {
namespace {

// The real functions, looked up when libtally is loaded: exec may be called where dlsym
// may not (a signal handler, a child forked from a threaded program).
struct RealExec {
  int (*execve)(const char*, char* const[], char* const[]);
  int (*execv)(const char*, char* const[]);
  int (*execvp)(const char*, char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  int (*fexecve)(int, char* const[], char* const[]);
  int (*execveat)(int, const char*, char* const[], char* const[], int);
};
constinit RealExec real_exec{};

template <class Function>
void look_up(Function& function, const char* name) {
  if (function == nullptr) function = reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

__attribute__((constructor)) void look_up_exec_functions() {
  look_up(real_exec.execve, "execve");
  look_up(real_exec.execv, "execv");
  look_up(real_exec.execvp, "execvp");
  look_up(real_exec.execvpe, "execvpe");
  look_up(real_exec.fexecve, "fexecve");
  look_up(real_exec.execveat, "execveat");
}

// Not found (cannot happen with glibc): fail like a missing system call.
int unavailable() {
  errno = ENOSYS;
  return -1;
}

class ExecGuard {
 public:
  ExecGuard() { paused_ = pause_sampling_for_exec(); }
  // Reached only when the exec failed.
  ~ExecGuard() {
    int saved_errno = errno;
    if (paused_) resume_sampling_after_exec();
    errno = saved_errno;
  }
  ExecGuard(const ExecGuard&) = delete;
  ExecGuard& operator=(const ExecGuard&) = delete;

 private:
  bool paused_ = false;
};

// execl-style argument lists, collected into an argv on the stack (async-signal-safe).
constexpr int kMaxListArguments = 4096;

}  // namespace
}  // namespace tally::runtime

using tally::runtime::ExecGuard;
using tally::runtime::kMaxListArguments;
using tally::runtime::look_up;
using tally::runtime::real_exec;
using tally::runtime::unavailable;

#define TALLY_EXPORT extern "C" __attribute__((visibility("default")))

TALLY_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  look_up(real_exec.execve, "execve");  // called before libtally's constructors ran
  if (real_exec.execve == nullptr) return unavailable();
  ExecGuard guard;
  return real_exec.execve(path, argv, envp);
}

TALLY_EXPORT int execv(const char* path, char* const argv[]) {
  look_up(real_exec.execv, "execv");  // called before libtally's constructors ran
  if (real_exec.execv == nullptr) return unavailable();
  ExecGuard guard;
  return real_exec.execv(path, argv);
}

TALLY_EXPORT int execvp(const char* file, char* const argv[]) {
  look_up(real_exec.execvp, "execvp");  // called before libtally's constructors ran
  if (real_exec.execvp == nullptr) return unavailable();
  ExecGuard guard;
  return real_exec.execvp(file, argv);
}

TALLY_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  look_up(real_exec.execvpe, "execvpe");  // called before libtally's constructors ran
  if (real_exec.execvpe == nullptr) return unavailable();
  ExecGuard guard;
  return real_exec.execvpe(file, argv, envp);
}

TALLY_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  look_up(real_exec.fexecve, "fexecve");  // called before libtally's constructors ran
  if (real_exec.fexecve == nullptr) return unavailable();
  ExecGuard guard;
  return real_exec.fexecve(fd, argv, envp);
}

TALLY_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                          int flags) {
  look_up(real_exec.execveat, "execveat");  // called before libtally's constructors ran
  if (real_exec.execveat == nullptr) return unavailable();
  ExecGuard guard;
  return real_exec.execveat(dirfd, path, argv, envp, flags);
}

namespace {

// Collects "arg0, ..., NULL" after `first` into an argv and execs it with `exec`.
template <class Exec>
int exec_list(const char* first, va_list& list, Exec exec) {
  char* argv[kMaxListArguments];
  int count = 0;
  argv[count++] = const_cast<char*>(first);
  while (argv[count - 1] != nullptr) {
    if (count == kMaxListArguments) {
      errno = E2BIG;
      return -1;
    }
    argv[count++] = va_arg(list, char*);
  }
  return exec(argv);
}

}  // namespace

TALLY_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list list;
  va_start(list, arg);
  int result = exec_list(arg, list, [&](char** argv) { return execv(path, argv); });
  va_end(list);
  return result;
}

TALLY_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list list;
  va_start(list, arg);
  int result = exec_list(arg, list, [&](char** argv) { return execvp(file, argv); });
  va_end(list);
  return result;
}

TALLY_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list list;
  va_start(list, arg);
  // The environment follows the argument list's NULL.
  int result = exec_list(arg, list, [&](char** argv) {
    return execve(path, argv, va_arg(list, char* const*));
  });
  va_end(list);
  return result;
}
