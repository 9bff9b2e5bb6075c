// off_cpu_span.h: the record the off-CPU BPF program (off_cpu.bpf.c) sends to userspace for
// each completed off-CPU span; shared by the BPF side and the C++ reader, so plain C types.
#ifndef TALLY_COLLECT_BPF_OFF_CPU_SPAN_H
#define TALLY_COLLECT_BPF_OFF_CPU_SPAN_H

// Why the thread left the CPU: the state of prev at sched_switch.
enum off_cpu_reason {
  OFF_CPU_PREEMPTED = 0,        // still runnable (TASK_RUNNING): preempted or yielded
  OFF_CPU_INTERRUPTIBLE = 1,    // TASK_INTERRUPTIBLE: waiting (sleep, I/O on a pipe/socket, futex)
  OFF_CPU_UNINTERRUPTIBLE = 2,  // TASK_UNINTERRUPTIBLE: disk I/O, some locks
  OFF_CPU_OTHER = 3,            // stopped, traced, parked, ...
};

// kernel_stack_id when the kernel frames were not taken on purpose (a thread preempted on
// its way back to user space); other negative ids are bpf_get_stackid's errors.
#define OFF_CPU_KERNEL_STACK_SKIPPED (-1000)

// Words copied from the top of the user stack at the switch-out: with the CFI of the
// mapped files they give the callers the kernel's frame-pointer walk skips (a frameless
// leaf, such as glibc's system call wrappers, hides its caller from that walk).
#define OFF_CPU_USER_WORDS 16

struct off_cpu_span {
  unsigned long long start_ns;  // CLOCK_MONOTONIC (bpf_ktime_get_ns), switch-out
  unsigned long long end_ns;    // switch-in
  int pid;                      // thread group (process) id
  int tid;
  int user_stack_id;            // id in the stack map; negative: not captured
  int kernel_stack_id;
  unsigned int reason;          // enum off_cpu_reason
  unsigned int cpu_in;          // CPU it was switched in on
  unsigned long long user_sp;   // the user stack pointer at the switch-out; 0: no words
  unsigned long long user_words[OFF_CPU_USER_WORDS];  // the words at user_sp upward
};

// What the program keeps per switched-out thread (map `starts`, by tid) until it is
// switched in; userspace reads what is left at the end: spans the recording cut.
struct off_cpu_switched_out {
  unsigned long long start_ns;
  int user_stack_id;
  int kernel_stack_id;
  unsigned int reason;
  int pid;
  unsigned long long user_sp;  // as in off_cpu_span
  unsigned long long user_words[OFF_CPU_USER_WORDS];
};

#endif
