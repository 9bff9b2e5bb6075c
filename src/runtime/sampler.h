// The sampling timers and the signal handler. Each thread gets its own timer, which
// signals that thread only:
//  - a perf_event task-clock counter (CPU time at hrtimer resolution, not the kernel tick)
//    whose overflow raises a real-time signal at that thread (F_SETSIG, F_SETOWN_EX
//    F_OWNER_TID), re-armed one overflow at a time (PERF_EVENT_IOC_REFRESH) so signals
//    can never pile up in a thread that blocks them;
//  - where perf_event_open is refused, a POSIX timer on the thread's CPU clock
//    (timer_create, SIGEV_THREAD_ID), or on CLOCK_MONOTONIC for wall-clock profiling.
// A sample's weight is the thread's clock time since its previous sample, in whole
// sampling periods (the remainder carried): timers that fire late, coalesce or are limited
// to the kernel tick still give counts that add up to the CPU time consumed. Samples are
// stratified: one per period of thread time, at a uniformly random point inside it, so a
// program whose work repeats with the sampling period (10 ms rounds at 100 Hz) is not
// seen at one phase only, while the rate stays exactly one sample per period.
// The signal is a real-time one, not SIGPROF, so glibc's profil/sprofil (and tally's) can
// run in the same program.
#pragma once

#include <semaphore.h>

#include <cstdint>

#include "runtime/maps_snapshot.h"
#include "runtime/stack_table.h"
#include "runtime/thread_registry.h"

namespace tally::runtime {

enum class SampleClock { cpu, wall };
enum class Mechanism { perf_event, posix_timer };
// How the handler walks stacks ($CPUPROFILE_UNWIND): the CFI (cfi_walk.h) or frame pointers.
enum class Unwinder { cfi, frame_pointers };

struct SamplerSettings {
  SampleClock clock = SampleClock::cpu;
  Mechanism mechanism = Mechanism::perf_event;
  uint64_t period_ns = 10'000'000;
  int signal = 0;
  Unwinder unwinder = Unwinder::cfi;
  int (*filter)(void*) = nullptr;
  void* filter_arg = nullptr;
};

// What the handlers record into, owned by the session.
struct SampleSinks {
  StackTable* table = nullptr;
  EvictionQueue* queue = nullptr;
  const MapsSnapshot* maps = nullptr;
  sem_t* wake_service = nullptr;  // posted when the queue fills up
};

// $CPUPROFILE_TIMER_SIGNAL, else the first real-time signal from SIGRTMIN+12 up that has
// no handler; -1 if there is none.
int choose_sample_signal();

// Control lock held for all of these.
// Installs the handler (once per signal) and publishes the settings; sampling starts.
bool begin_sampling(const SamplerSettings& settings, const SampleSinks& sinks);
// Starts the thread's timer. False (with a message on stderr) if it cannot.
bool arm(ThreadSlot& slot);
// Stops and closes the thread's timer.
void disarm(ThreadSlot& slot);
// Stops recording and waits until no handler is still recording.
void end_sampling();
bool sampling();
Mechanism sampling_mechanism();

// Before the calling thread execs (async-signal-safe, no lock): its timer is paused and a
// sampling signal already queued for it is dequeued. True if there was a timer to pause.
bool pause_sampling_for_exec();
// The exec failed: the thread's timer goes on.
void resume_sampling_after_exec();

// In a forked child: the inherited perf_event descriptors count the parent's threads;
// close them (without disabling what the parent still uses). POSIX timers are not
// inherited.
void close_inherited_timers_after_fork();

}  // namespace tally::runtime
