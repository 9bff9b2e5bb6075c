// rusage_of RESULT CMD [ARG...]: runs CMD (its stdin, stdout and stderr are this program's),
// waits for it with wait4 and writes "WALL_NS MAXRSS_KB CPU_US STATUS" to RESULT: its wall
// time, its peak resident memory, the user + system CPU time the kernel accounted to it and
// its exit status (128 + N for signal N). measure.sh times every run of the bench scripts
// with it: GNU time prints CPU time in units of 10 ms, too coarse for the short runs, and a
// wrapper in python starts CMD from a 13 MB process, whose peak memory the kernel counts as
// CMD's (a forked child's peak RSS survives exec). Linked statically to stay small.
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>

namespace {

long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

long long microseconds(const timeval& t) {
  return static_cast<long long>(t.tv_sec) * 1000000 + t.tv_usec;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: rusage_of RESULT CMD [ARG...]\n");
    return 2;
  }
  const long long start = now_ns();
  const pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    std::perror(argv[2]);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) {
    std::perror("rusage_of");
    return 125;
  }
  const long long wall = now_ns() - start;
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) {
    std::perror(argv[1]);
    return 125;
  }
  std::fprintf(out, "%lld %ld %lld %d\n", wall, usage.ru_maxrss,
               microseconds(usage.ru_utime) + microseconds(usage.ru_stime), code);
  return std::fclose(out) == 0 ? code : 125;
}
