// The timers of sprofil(): one per thread on that thread's CPU clock, signalling that
// thread, so that each thread's ticks are its own exactly (armed for the threads there
// are at the start, and by each new thread as it starts: sprofil_thread_started); and one
// on the process's CPU clock that finds threads without a timer yet (started otherwise):
// its tick, which Linux delivers to the thread that was running, arms that thread's timer
// and is counted for it once (without its overrun, which may be other threads' time).
//
// Threads that no process tick lands on are found by listing /proc/self/task every few
// process ticks. A single process-wide timer is not enough: with the ticks of all CPUs at the same
// instant, the first CPU to handle the expiry takes the signal (and the other CPU's tick as
// its overrun), so a thread that often runs beside another may get far fewer ticks than
// its CPU time (measured here: 27 instead of 75).
//
// All timers send SIGPROF with si_code SI_TIMER and a si_value that tells which kind sent
// it. Raw system calls throughout: glibc's timer_t encoding stays out of it, and the
// signal handler and the fork child may call them (async-signal-safe).
#pragma once

#include <signal.h>

#include <cstdint>

namespace tally::runtime {

enum class TickSource { foreign, thread_timer, process_timer };

// Which of sprofil's timers sent this signal, if any. Async-signal-safe.
TickSource tick_source(const siginfo_t* info);

// Arms the process timer and a timer for each thread of the process, every
// `interval_ns` of CPU time. Returns 0 or an errno value (nothing stays armed then).
int start_tick_timers(uint64_t interval_ns);

// For a process tick: true if the calling thread has no timer of its own (this tick is
// counted for it, once), and then arms one; every few process ticks, also arms the threads
// started since the last look. Async-signal-safe, lock-free.
bool adopt_current_thread(uint64_t interval_ns);

// Deletes every timer. No handler may arm a new one meanwhile.
void stop_tick_timers();

// In a forked child, where no timer of the parent exists: forgets them, and arms the
// process timer and the calling thread's. Async-signal-safe.
int restart_tick_timers_in_child(uint64_t interval_ns);

}  // namespace tally::runtime
