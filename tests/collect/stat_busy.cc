// stat_busy [--perf-control CTL ACK] MS THREADS [OUT]: THREADS threads each burn MS
// milliseconds of CPU time (by their own thread CPU clock, so the amount of work does not
// depend on how loaded the machine is); then, if OUT is given, the process's CPU time in
// nanoseconds is written there. With --perf-control, `perf stat -D -1 --control
// fifo:CTL,ACK` is told to count exactly while the work runs. Prints nothing on stdout:
// tally stat's trace owns it in the tests.
#include <pthread.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

uint64_t cpu_ns(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ULL + static_cast<uint64_t>(now.tv_nsec);
}

void burn(uint64_t ns) {
  volatile uint64_t sink = 0;
  while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < ns)
    for (int i = 0; i < 10000; ++i) sink = sink + static_cast<uint64_t>(i);
}

}  // namespace

// Sends a command to perf stat's control FIFO and waits for its "ack".
bool perf_control(const char* ctl, const char* ack, const char* command) {
  std::FILE* out = std::fopen(ctl, "w");
  if (!out) return false;
  std::fprintf(out, "%s\n", command);
  std::fclose(out);
  std::FILE* in = std::fopen(ack, "r");
  if (!in) return false;
  char reply[16] = {};
  bool acked = std::fgets(reply, sizeof(reply), in) != nullptr;
  std::fclose(in);
  return acked;
}

int main(int argc, char** argv) {
  const char* ctl = nullptr;
  const char* ack = nullptr;
  if (argc > 3 && std::string(argv[1]) == "--perf-control") {
    ctl = argv[2];
    ack = argv[3];
    argc -= 3;
    argv += 3;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: stat_busy [--perf-control CTL ACK] MS THREADS [OUT]\n");
    return 2;
  }
  if (ctl && !perf_control(ctl, ack, "enable")) return 3;
  const uint64_t ns = std::strtoull(argv[1], nullptr, 10) * 1000000ULL;
  const int threads = std::atoi(argv[2]);
  std::vector<std::thread> workers;
  for (int i = 1; i < threads; ++i) workers.emplace_back(burn, ns);
  burn(ns);
  for (auto& worker : workers) worker.join();
  if (ctl && !perf_control(ctl, ack, "disable")) return 3;
  if (argc > 3) {
    std::FILE* out = std::fopen(argv[3], "w");
    if (!out) return 1;
    std::fprintf(out, "%llu\n", static_cast<unsigned long long>(cpu_ns(CLOCK_PROCESS_CPUTIME_ID)));
    std::fclose(out);
  }
  return 0;
}
