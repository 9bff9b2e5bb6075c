// The sampling machinery of sprofil(): CPU-time timers (sprofil_timers.h: one per
// thread, and one for the process that finds new threads) send SIGPROF once a kernel tick
// of a thread's CPU time; the handler counts the pc the signal interrupted into the
// current region table.
//
// Coexistence on SIGPROF: the timers' signals carry si_code SI_TIMER and a si_value that
// is the address of a private cookie; the handler counts only those and passes every other
// SIGPROF to the action it replaced (a handler is called with the same arguments;
// SIG_DFL and SIG_IGN: the signal is dropped; a signal passed back to it by a handler it
// passed it to ends there). Each call that enables profiling puts the handler on top again
// if another was installed since. A handler installed later on SIGPROF must pass on the
// signals it does not own, and restore the action it replaced only if its own is still
// installed (LIFO). When profiling stops, the handler is replaced by the saved action only
// if it is still the installed one and the saved action is not SIG_DFL (a tick still
// queued would terminate the program); otherwise it stays as a pass-through.
#pragma once

#include "runtime/sprofil_regions.h"

namespace tally::runtime {

// Makes `table` the one counted into (nullptr: profiling off), arming the timer and
// installing the handler on the first table, disarming and uninstalling on nullptr.
// When it returns, no handler uses the previous table any more (it has been deleted), so
// the caller may free the counters it pointed to. Returns 0 or an errno value (the
// previous table then stays in use). Not async-signal-safe; calls are serialized.
int replace_sprofil_table(RegionTablePtr table);

// Called by each new thread before its own code (libtally's pthread_create): while
// profiling, arms the thread's timer at once. Other threads are found by the process
// timer. Async-signal-safe.
void sprofil_thread_started();

// The interval at which ticks are counted: the kernel tick (kernel_tick.h).
uint64_t sprofil_interval_ns();

}  // namespace tally::runtime
