// off_cpu_bpf_record CMD [ARG...]: the feasibility probe for off-CPU recording in BPF
// (issue 23). Starts CMD stopped, puts its pid in the target set of the off-CPU BPF
// program (src/collect/bpf/off_cpu.bpf.c), attaches it, lets CMD run, drains the ring
// buffer of completed spans while it runs and, after it exits, reads each distinct
// stack once from the stack map, as a recorder would. Prints the spans, off-CPU time by
// reason, distinct stacks and lost spans on stderr. bench/off_cpu_overhead.sh times it
// beside tally record --off-cpu and perf record -e sched:sched_switch -g.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "collect/bpf/off_cpu_span.h"
#include "off_cpu.skel.h"

namespace {

struct Totals {
  long long spans = 0;
  long long off_cpu_ns[4] = {};
  std::set<int> stack_ids;
};

int on_span(void* context, void* data, size_t size) {
  if (size < sizeof(off_cpu_span)) return 0;
  auto* totals = static_cast<Totals*>(context);
  off_cpu_span span;
  std::memcpy(&span, data, sizeof(span));
  ++totals->spans;
  totals->off_cpu_ns[span.reason & 3] += static_cast<long long>(span.end_ns - span.start_ns);
  if (span.user_stack_id >= 0) totals->stack_ids.insert(span.user_stack_id);
  if (span.kernel_stack_id >= 0) totals->stack_ids.insert(-2 - span.kernel_stack_id);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: off_cpu_bpf_record CMD [ARG...]\n");
    return 2;
  }
  int go[2];
  if (pipe(go) != 0) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(go[1]);
    char byte;
    if (read(go[0], &byte, 1) != 1) _exit(127);
    close(go[0]);
    execvp(argv[1], argv + 1);
    std::fprintf(stderr, "off_cpu_bpf_record: cannot run %s: %s\n", argv[1], std::strerror(errno));
    _exit(127);
  }
  close(go[0]);
  off_cpu_bpf* skel = off_cpu_bpf__open_and_load();
  if (!skel) {
    std::fprintf(stderr, "off_cpu_bpf_record: cannot load the BPF program: %s\n", std::strerror(errno));
    kill(child, SIGKILL);
    return 1;
  }
  __u32 key = static_cast<__u32>(child);
  __u8 yes = 1;
  if (bpf_map__update_elem(skel->maps.target_pids, &key, sizeof(key), &yes, sizeof(yes), BPF_ANY) != 0 ||
      off_cpu_bpf__attach(skel) != 0) {
    std::fprintf(stderr, "off_cpu_bpf_record: cannot attach: %s\n", std::strerror(errno));
    kill(child, SIGKILL);
    return 1;
  }
  Totals totals;
  ring_buffer* ring = ring_buffer__new(bpf_map__fd(skel->maps.spans), on_span, &totals, nullptr);
  if (!ring) return 1;
  if (write(go[1], "g", 1) != 1) return 1;
  close(go[1]);
  int status = 0;
  for (;;) {
    ring_buffer__poll(ring, 100);
    pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
  }
  ring_buffer__consume(ring);
  // One read per distinct stack, as a recorder symbolizing them would.
  std::vector<__u64> frames(127);
  long long frame_count = 0;
  int stacks_fd = bpf_map__fd(skel->maps.stacks);
  for (int id : totals.stack_ids) {
    __u32 stack_id = static_cast<__u32>(id >= 0 ? id : -2 - id);
    if (bpf_map_lookup_elem(stacks_fd, &stack_id, frames.data()) != 0) continue;
    for (__u64 pc : frames) {
      if (pc == 0) break;
      ++frame_count;
    }
  }
  static const char* const reason_names[] = {"preempted", "interruptible", "uninterruptible", "other"};
  std::fprintf(stderr, "off_cpu_bpf_record: %lld spans, %zu distinct stacks (%lld frames), lost %llu spans\n",
               totals.spans, totals.stack_ids.size(), frame_count,
               static_cast<unsigned long long>(skel->bss->lost_spans));
  for (int r = 0; r < 4; ++r) {
    std::fprintf(stderr, "  %-16s %.3f s\n", reason_names[r], static_cast<double>(totals.off_cpu_ns[r]) / 1e9);
  }
  ring_buffer__free(ring);
  off_cpu_bpf__destroy(skel);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
