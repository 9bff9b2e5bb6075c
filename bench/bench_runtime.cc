// libtally's signal-handler path, without the kernel: the frame-pointer walk of a real
// 16-deep stack, and adding stacks to the lock-free table (one hot stack, many distinct
// ones, and 4 threads at once). The kernel's part (timer interrupt, signal delivery) is
// measured by profiler_overhead_vs_gperftools.sh on a whole program.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "runtime/stack_table.h"
#include "runtime/stack_walk.h"

namespace {

using tally::runtime::EvictionQueue;
using tally::runtime::hash_stack;
using tally::runtime::kMaxFrames;
using tally::runtime::Registers;
using tally::runtime::StackBounds;
using tally::runtime::StackTable;

__attribute__((noinline)) int walk_here(benchmark::State& state, const StackBounds& bounds) {
  uintptr_t pcs[kMaxFrames];
  int depth = 0;
  for (auto _ : state) {
    Registers registers;
    registers.pc = reinterpret_cast<uintptr_t>(&walk_here);
    registers.fp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    registers.sp = registers.fp;
    depth = tally::runtime::walk_stack(registers, bounds, nullptr, false, pcs, kMaxFrames);
    benchmark::DoNotOptimize(pcs);
  }
  return depth;
}

__attribute__((noinline)) int recurse(benchmark::State& state, const StackBounds& bounds, int levels) {
  if (levels == 0) return walk_here(state, bounds);
  int depth = recurse(state, bounds, levels - 1);
  benchmark::DoNotOptimize(depth);
  return depth;
}

void BM_WalkStack16(benchmark::State& state) {
  StackBounds bounds = tally::runtime::current_thread_stack_bounds();
  int depth = recurse(state, bounds, 14);
  state.counters["frames"] = depth;
}
BENCHMARK(BM_WalkStack16);

// The leaf check reads the code before a return address with process_vm_readv.
void BM_FollowsCall(benchmark::State& state) {
  tally::runtime::set_walk_pid(getpid());
  uintptr_t return_address = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(tally::runtime::follows_call(return_address, 0, nullptr));
  }
}
BENCHMARK(BM_FollowsCall);

std::vector<uintptr_t> stack_of(uint64_t id, int depth) {
  std::vector<uintptr_t> stack;
  for (int i = 0; i < depth; ++i) stack.push_back(0x400000 + id * 0x1000 + static_cast<uintptr_t>(i) * 16);
  return stack;
}

void BM_TableAddHotStack(benchmark::State& state) {
  static StackTable table;
  table.reset();
  std::vector<uintptr_t> stack = stack_of(1, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    uint64_t hash = hash_stack(stack.data(), static_cast<int>(stack.size()));
    benchmark::DoNotOptimize(table.add(hash, stack.data(), static_cast<int>(stack.size()), 1));
  }
}
BENCHMARK(BM_TableAddHotStack)->Arg(8)->Arg(32)->Arg(128);

// 3000 distinct 24-deep stacks round robin: hash, probe, compare, with the table 3/4 full.
void BM_TableAddManyStacks(benchmark::State& state) {
  static StackTable table;
  static EvictionQueue queue;
  table.reset();
  queue.reset();
  std::vector<std::vector<uintptr_t>> stacks;
  for (uint64_t i = 0; i < 3000; ++i) stacks.push_back(stack_of(i, 24));
  size_t next = 0;
  for (auto _ : state) {
    const auto& stack = stacks[next];
    next = next + 1 == stacks.size() ? 0 : next + 1;
    uint64_t hash = hash_stack(stack.data(), 24);
    if (!table.add(hash, stack.data(), 24, 1)) queue.push(1, stack.data(), 24);
    if (queue.approximate_size() > EvictionQueue::kSlots / 2) {
      queue.drain([](void*, uint64_t, const uintptr_t*, int) {}, nullptr);
    }
  }
}
BENCHMARK(BM_TableAddManyStacks);

// Four threads adding to one hot stack at once: the compare-and-swap under contention.
void BM_TableAddContended(benchmark::State& state) {
  static StackTable table;
  if (state.thread_index() == 0) table.reset();
  std::vector<uintptr_t> stack = stack_of(7, 16);
  uint64_t hash = hash_stack(stack.data(), 16);
  for (auto _ : state) benchmark::DoNotOptimize(table.add(hash, stack.data(), 16, 1));
}
BENCHMARK(BM_TableAddContended)->Threads(4);

}  // namespace

BENCHMARK_MAIN();
