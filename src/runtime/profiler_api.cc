// The exported C API of include/tally/profiler.h (gperftools' profiler.h).
#include "tally/profiler.h"

#include <string.h>

#include "runtime/session.h"
#include "runtime/stack_table.h"
#include "runtime/stack_walk.h"
#include "runtime/text.h"
#include "runtime/thread_registry.h"

using namespace tally::runtime;

extern "C" {

int ProfilerStart(const char* fname) { return ProfilerStartWithOptions(fname, nullptr); }

int ProfilerStartWithOptions(const char* fname, const ProfilerOptions* options) {
  StartOptions start;
  if (options != nullptr) {
    start.filter = options->filter_in_thread;
    start.filter_arg = options->filter_in_thread_arg;
  }
  return start_profiling(fname, start) ? 1 : 0;
}

void ProfilerStop(void) { stop_profiling(); }

void ProfilerFlush(void) { flush_profiling(); }

// gperftools made these no-ops long ago; programs still call them.
void ProfilerEnable(void) {}
void ProfilerDisable(void) {}

int ProfilingIsEnabledForAllThreads(void) { return session_state().enabled ? 1 : 0; }

void ProfilerRegisterThread(void) { register_thread(); }

void ProfilerGetCurrentState(ProfilerState* state) {
  SessionState current = session_state();
  memset(state, 0, sizeof *state);
  state->enabled = current.enabled ? 1 : 0;
  state->start_time = current.start_time;
  copy_text(state->profile_name, sizeof state->profile_name, current.path);
  constexpr uint64_t kMaxInt = 0x7fffffff;
  state->samples_gathered = static_cast<int>(current.samples < kMaxInt ? current.samples : kMaxInt);
}

__attribute__((noinline)) int ProfilerGetStackTrace(void** result, int max_depth, int skip_count,
                                                    const void* uc) {
  if (result == nullptr || max_depth <= 0) return 0;
  ThreadSlot* slot = current_slot();
  StackBounds bounds = slot != nullptr ? slot->stack : StackBounds{};
  Registers registers;
  if (uc != nullptr) {
    registers = registers_from_context(uc);
  } else {
    // Start at our caller: its pc is our return address, its frame the one ours links to.
    auto frame = reinterpret_cast<const uintptr_t*>(__builtin_frame_address(0));
    registers.pc = frame[1];
    registers.fp = frame[0];
    registers.sp = reinterpret_cast<uintptr_t>(frame + 2);
  }
  if (skip_count < 0) skip_count = 0;
  uintptr_t pcs[tally::runtime::kMaxFrames];
  int depth = walk_stack(registers, bounds, nullptr, uc != nullptr, pcs, tally::runtime::kMaxFrames);
  int stored = 0;
  for (int i = skip_count; i < depth && stored < max_depth; ++i) {
    result[stored++] = reinterpret_cast<void*>(pcs[i]);
  }
  return stored;
}

}  // extern "C"
