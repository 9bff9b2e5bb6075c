// off_cpu.bpf.c: off-CPU spans of a set of processes, measured in the kernel. At every
// sched_switch, a switched-out thread of a target process gets its switch-out time, its
// user and kernel stack ids, the reason and the 16 words at its user stack pointer (for
// userspace to find with CFI the callers a frameless leaf hides from the frame-pointer
// walk: collect/frameless_callers.h) stored by tid; when a thread with a stored
// start is switched in, one off_cpu_span goes to the ring buffer. Stacks are interned in
// a stack-trace map, so userspace reads each distinct stack once, not once per switch
// (the perf_event_open path copies a callchain per switch). Threads and forked children
// of a target follow: threads share the tgid, children are added on sched_process_fork.
//
// Built with clang -target bpf -g -O2 and CO-RE: the few task_struct fields used are
// declared here with preserve_access_index, so no vmlinux.h of the build machine is needed.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "off_cpu_span.h"

struct task_struct {
  int pid;
  int tgid;
} __attribute__((preserve_access_index));

// The registers saved at the task's entry into the kernel (x86-64's struct pt_regs, by
// CO-RE: the ___ suffix keeps it apart from the UAPI struct of the same name).
struct pt_regs___entry {
  long ax;
  unsigned long sp;
} __attribute__((preserve_access_index));

#define MAX_STACK_DEPTH 127
#define TASK_DEAD 0x80
#define TARGET_FOLLOWED 1
#define TARGET_AT_EXEC 2
#define ENOSYS 38

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u32);   // tgid
  __type(value, __u8);  // TARGET_FOLLOWED, or TARGET_AT_EXEC: followed from its next exec
} target_pids SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, __u32);   // tid
  __type(value, struct off_cpu_switched_out);
} starts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_STACK_TRACE);
  __uint(max_entries, 16384);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 8 << 20);
} spans SEC(".maps");

// Userspace reads on a timer: a wakeup per span would itself cost context switches.

// Spans dropped because the ring buffer was full (userspace reads it through the skeleton).
__u64 lost_spans = 0;

// True when prev, still runnable, gives up the CPU on its way back to user space: a
// system call that has returned (its result is in ax; during the call ax holds -ENOSYS,
// set at entry) or an interrupt or exception taken in user mode, with a reschedule due.
// Its kernel frames are the exit path (exit_to_user_mode_loop -> schedule) and say nothing
// of why it waits, and unwinding them is most of the program's cost: they are not taken.
// A thread preempted inside the kernel (preempt set) or yielding inside a call keeps them.
static __always_inline int leaving_for_user(struct pt_regs___entry* regs, _Bool preempt,
                                            unsigned int prev_state) {
  if (preempt || (prev_state & 0xff) != 0) return 0;
  return regs && regs->ax != -ENOSYS;
}

// The words at the top of the user stack, for userspace to find with CFI the callers the
// frame-pointer walk of bpf_get_stackid misses. The read cannot fault a page in here: if
// the top of the stack is not present it fails, and user_sp stays 0: no words.
static __always_inline void copy_user_words(struct pt_regs___entry* regs,
                                            struct off_cpu_switched_out* out) {
  if (!regs) return;
  unsigned long sp = regs->sp;
  if (sp == 0 || bpf_probe_read_user(out->user_words, sizeof(out->user_words), (void*)sp) != 0)
    return;
  out->user_sp = sp;
}

static __always_inline __u32 reason_of(unsigned int prev_state) {
  switch (prev_state & 0xff) {
    case 0: return OFF_CPU_PREEMPTED;
    case 1: return OFF_CPU_INTERRUPTIBLE;
    case 2: return OFF_CPU_UNINTERRUPTIBLE;
    default: return OFF_CPU_OTHER;
  }
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, _Bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  __u64 now = bpf_ktime_get_ns();
  __u32 prev_tgid = prev->tgid;
  // A thread's last switch-out, after it exited (TASK_DEAD), starts no wait.
  __u8* target = prev->pid != 0 && !(prev_state & TASK_DEAD)
                     ? bpf_map_lookup_elem(&target_pids, &prev_tgid) : 0;
  if (target && *target == TARGET_FOLLOWED) {
    __u32 tid = prev->pid;
    struct off_cpu_switched_out out = {};
    out.start_ns = now;
    // The stacks are prev's: this runs in prev's context, before the switch.
    struct pt_regs___entry* regs =
        (struct pt_regs___entry*)bpf_task_pt_regs((struct task_struct*)prev);
    out.kernel_stack_id = leaving_for_user(regs, preempt, prev_state)
                              ? OFF_CPU_KERNEL_STACK_SKIPPED : bpf_get_stackid(ctx, &stacks, 0);
    out.user_stack_id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
    out.reason = preempt ? OFF_CPU_PREEMPTED : reason_of(prev_state);
    out.pid = (int)prev_tgid;
    copy_user_words(regs, &out);
    bpf_map_update_elem(&starts, &tid, &out, BPF_ANY);
  }
  __u32 next_tid = next->pid;
  struct off_cpu_switched_out* in = bpf_map_lookup_elem(&starts, &next_tid);
  if (!in) return 0;
  struct off_cpu_span* span = bpf_ringbuf_reserve(&spans, sizeof(*span), 0);
  if (span) {
    span->start_ns = in->start_ns;
    span->end_ns = now;
    span->pid = next->tgid;
    span->tid = next_tid;
    span->user_stack_id = in->user_stack_id;
    span->kernel_stack_id = in->kernel_stack_id;
    span->reason = in->reason;
    span->cpu_in = bpf_get_smp_processor_id();
    span->user_sp = in->user_sp;
    __builtin_memcpy(span->user_words, in->user_words, sizeof(span->user_words));
    bpf_ringbuf_submit(span, BPF_RB_NO_WAKEUP);
  } else {
    __sync_fetch_and_add(&lost_spans, 1);
  }
  bpf_map_delete_elem(&starts, &next_tid);
  return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct* parent, struct task_struct* child) {
  __u32 parent_tgid = parent->tgid;
  if (!bpf_map_lookup_elem(&target_pids, &parent_tgid)) return 0;
  __u32 child_tgid = child->tgid;
  __u8 followed = TARGET_FOLLOWED;
  bpf_map_update_elem(&target_pids, &child_tgid, &followed, BPF_ANY);
  return 0;
}

// A command started held is followed from its exec, as perf's enable_on_exec does: before
// it, it runs tally's code, whose frames its new address space could not name.
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct* task) {
  __u32 tgid = task->tgid;
  __u8* target = bpf_map_lookup_elem(&target_pids, &tgid);
  if (target && *target == TARGET_AT_EXEC) *target = TARGET_FOLLOWED;
  return 0;
}

// Exited threads leave no stale start behind (tids are reused).
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct* task) {
  __u32 tid = task->pid;
  bpf_map_delete_elem(&starts, &tid);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
