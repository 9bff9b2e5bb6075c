// One stack walk of libtally's signal handler, CFI (cfi_walk.h, the default) against the
// frame-pointer walk (stack_walk.h), on this process's real stack at 10 and 50 frames:
// the registers are those getcontext() saves in the deepest frame of a recursion, the
// index is built from this process's loaded images as libtally builds it. Built with
// frame pointers so that both walks see every frame; time per walk and per frame. The
// same stack walked by libunwind (unw_init_local, then unw_step to the end, reading each
// frame's pc: what gperftools' libprofiler does in its handler), when libunwind-dev is
// installed.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <ucontext.h>

#include <cstdint>

#if defined(TALLY_HAVE_LIBUNWIND)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#include "runtime/cfi_walk.h"
#include "runtime/stack_table.h"
#include "runtime/stack_walk.h"
#include "runtime/unwind_index.h"

namespace {

using namespace tally::runtime;

enum class Walk { cfi, frame_pointers, libunwind };

__attribute__((noinline)) int walk_from_here(benchmark::State& state, Walk walk) {
  static StackBounds bounds = tally::runtime::current_thread_stack_bounds();
  ucontext_t context;
  getcontext(&context);
  Registers registers = registers_from_context(&context);
  uintptr_t pcs[kMaxFrames];
  int depth = 0;
#if defined(TALLY_HAVE_LIBUNWIND)
  unw_context_t unwind_context;
  unw_getcontext(&unwind_context);
#endif
  for (auto _ : state) {
    if (walk == Walk::libunwind) {
#if defined(TALLY_HAVE_LIBUNWIND)
      unw_cursor_t cursor;
      unw_init_local(&cursor, &unwind_context);
      depth = 0;
      do {
        unw_word_t pc;
        if (unw_get_reg(&cursor, UNW_REG_IP, &pc) != 0) break;
        pcs[depth++] = pc;
      } while (depth < kMaxFrames && unw_step(&cursor) > 0);
#endif
    } else if (walk == Walk::cfi) {
      StackCut cut;
      depth = walk_stack_cfi(enter_index_reader(), registers, bounds, pcs, kMaxFrames, &cut);
      leave_index_reader();
    } else {
      depth = walk_stack(registers, bounds, nullptr, false, pcs, kMaxFrames);
    }
    benchmark::DoNotOptimize(pcs);
  }
  return depth;
}

__attribute__((noinline)) int recurse(benchmark::State& state, Walk walk, int levels) {
  if (levels == 0) return walk_from_here(state, walk);
  int depth = recurse(state, walk, levels - 1);
  benchmark::DoNotOptimize(depth);
  return depth;
}

// state.range(0): the frames wanted in all (the benchmark's own callers included).
void run(benchmark::State& state, Walk walk) {
  refresh_unwind_index(false);
  int depth = recurse(state, walk, static_cast<int>(state.range(0)) - 8);
  state.counters["frames"] = depth;
  state.counters["ns/frame"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * depth, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_CfiWalk(benchmark::State& state) { run(state, Walk::cfi); }
void BM_FramePointerWalk(benchmark::State& state) { run(state, Walk::frame_pointers); }
void BM_LibunwindWalk(benchmark::State& state) {
#if defined(TALLY_HAVE_LIBUNWIND)
  run(state, Walk::libunwind);
#else
  state.SkipWithError("built without libunwind (install libunwind-dev and reconfigure)");
#endif
}
BENCHMARK(BM_CfiWalk)->Arg(10)->Arg(50);
BENCHMARK(BM_FramePointerWalk)->Arg(10)->Arg(50);
BENCHMARK(BM_LibunwindWalk)->Arg(10)->Arg(50);

// Building the index of every loaded image (what the service thread does after a dlopen).
void BM_BuildUnwindIndex(benchmark::State& state) {
  for (auto _ : state) refresh_unwind_index(true);
}
BENCHMARK(BM_BuildUnwindIndex)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
