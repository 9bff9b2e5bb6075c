// run_measured OUT CMD [ARG...]: runs CMD, waits for it with wait4 and writes the CPU time
// the kernel accounted to it ("user_us system_us") to OUT; exits with its status. The
// record tests measure a workload's real CPU time with it, independently of tally.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: run_measured OUT CMD [ARG...]\n");
    return 2;
  }
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return 125;
  FILE* out = std::fopen(argv[1], "w");
  if (!out) return 125;
  std::fprintf(out, "%lld %lld\n",
               static_cast<long long>(usage.ru_utime.tv_sec) * 1000000 + usage.ru_utime.tv_usec,
               static_cast<long long>(usage.ru_stime.tv_sec) * 1000000 + usage.ru_stime.tv_usec);
  std::fclose(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
