// The DWARF unwinder on samples the kernel takes: this thread samples itself with
// perf_event_open (cpu-clock, PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER, as
// `tally record -g dwarf` asks) while it burns CPU in the fixture's frameless leaf under
// libc's qsort, and every sample's chain is checked.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "collect/dwarf_unwind.h"
#include "support/test_support.h"
#include "unwind_test_support.h"

namespace tally::collect {
namespace {

using test::KernelSample;
using test::Place;
using test::SelfSampler;

__attribute__((noinline)) std::vector<KernelSample> sample_burning_cpu() {
  SelfSampler sampler(/*period_ns=*/2'000'000, /*stack_bytes=*/16384);
  if (!sampler.problem().empty()) return {};
  sampler.start();
  uint64_t result = uf_spin(4'000'000);  // ~20 comparisons, ~0.1 s
  sampler.stop();
  asm volatile("" : : "r"(result) : "memory");
  return sampler.samples();
}

TEST(DwarfUnwindKernelSamples, LeafUnderLibcQsortHasItsWholeChain) {
  {
    SelfSampler probe(1'000'000, 8);
    if (!probe.problem().empty()) TALLY_SKIP_OR_FAIL_IN_CI("cannot sample: " << probe.problem());
  }
  auto samples = sample_burning_cpu();
  ASSERT_GE(samples.size(), 10u);

  ProcessTable table;
  ASSERT_TRUE(table.load_proc_maps(getpid()));
  const AddressSpace& maps = *table.find(getpid());
  test::Symbols symbols(maps);
  DwarfUnwinder unwinder;
  size_t in_burn = 0;
  for (const auto& sample : samples) {
    ASSERT_EQ(sample.regs.abi, static_cast<uint64_t>(PERF_SAMPLE_REGS_ABI_64));
    ASSERT_FALSE(sample.stack.empty());
    std::vector<uint64_t> pcs;
    unwinder.unwind(getpid(), maps, sample.regs, sample.stack, pcs);
    auto chain = symbols.chain(pcs);
    ASSERT_FALSE(chain.empty());
    EXPECT_EQ(chain.back().function, "_start") << test::describe(chain);
    if (chain[0].function != "uf_burn") continue;
    ++in_burn;
    size_t i = 1;
    ASSERT_GT(chain.size(), 8u) << test::describe(chain);
    EXPECT_EQ(chain[i++].function, "uf_spin_compare") << test::describe(chain);
    size_t libc = 0;
    // libc's qsort (behind the sanitizer runtime's interceptor in ASan builds)
    while (i < chain.size() && (test::basename_of(chain[i].file) == "libc.so.6" ||
                                test::basename_of(chain[i].file).starts_with("libasan")))
      ++i, ++libc;
    EXPECT_GE(libc, 1u) << test::describe(chain);
    ASSERT_LT(i + 2, chain.size());
    EXPECT_EQ(chain[i++].function, "uf_spin_sort") << test::describe(chain);
    EXPECT_EQ(chain[i++].function, "uf_spin") << test::describe(chain);
    EXPECT_NE(chain[i].function.find("sample_burning_cpu"), std::string::npos)
        << test::describe(chain);
  }
  EXPECT_GE(in_burn, samples.size() / 2);  // the leaf is where the time goes
  EXPECT_EQ(unwinder.stats().samples, samples.size());
  EXPECT_EQ(unwinder.stats().truncated, 0u);
  EXPECT_EQ(unwinder.stats().frame_pointer_steps, 0u);
}

// A child running `argv`, held before exec until go() (so that a counter can be attached
// first); killed when the object goes away.
class Child {
 public:
  explicit Child(std::vector<std::string> argv) {
    if (pipe(gate_) != 0) return;
    std::vector<char*> pointers;
    for (auto& arg : argv) pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      char byte;
      close(gate_[1]);
      if (read(gate_[0], &byte, 1) != 1) _exit(126);
      execv(pointers[0], pointers.data());
      _exit(127);
    }
    close(gate_[0]);
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(gate_[1]);
  }
  pid_t pid() const { return pid_; }
  void go() { (void)!write(gate_[1], "x", 1); }

 private:
  int gate_[2] = {-1, -1};
  pid_t pid_ = -1;
};

// Samples a fixture workload (../shared/fixtures/bin) as `tally record -g dwarf` will,
// unwinds every sample and calls `check` with the chains whose leaf is one of `wanted`,
// until each was seen as often as `wanted` says (or 8 s passed). Returns the counts.
std::map<std::string, size_t> sample_workload(
    const std::vector<std::string>& argv, const std::map<std::string, size_t>& wanted,
    DwarfUnwinder& unwinder, const std::function<void(const std::vector<Place>&)>& check) {
  std::map<std::string, size_t> seen;
  Child child(argv);
  if (child.pid() <= 0) return seen;
  SelfSampler sampler(/*period_ns=*/1'000'000, /*stack_bytes=*/16384, child.pid(), /*on_exec=*/true);
  if (!sampler.problem().empty()) return seen;
  child.go();
  ProcessTable table;
  std::unique_ptr<test::Symbols> symbols;
  std::vector<KernelSample> pending;
  auto enough = [&] {
    for (const auto& [leaf, count] : wanted)
      if (seen[leaf] < count) return false;
    return true;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  while (std::chrono::steady_clock::now() < deadline && !enough()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (auto& sample : sampler.samples()) pending.push_back(std::move(sample));
    if (!symbols) {
      // The maps, once the program runs its own code (its libraries are loaded by then).
      if (pending.size() < 10 || !table.load_proc_maps(child.pid())) continue;
      symbols = std::make_unique<test::Symbols>(*table.find(child.pid()));
    }
    for (const auto& sample : pending) {
      std::vector<uint64_t> pcs;
      unwinder.unwind(child.pid(), *table.find(child.pid()), sample.regs, sample.stack, pcs);
      auto chain = symbols->chain(pcs);
      if (chain.empty() || !wanted.contains(chain[0].function)) continue;
      ++seen[chain[0].function];
      check(chain);
    }
    pending.clear();
  }
  return seen;
}

// Whether `chain` is `expected` (each a part of the frame's function name) followed by
// libc's two start-up frames and _start.
void expect_chain(const std::vector<Place>& chain, const std::vector<std::string>& expected) {
  ASSERT_EQ(chain.size(), expected.size() + 3) << test::describe(chain);
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NE(chain[i].function.find(expected[i]), std::string::npos) << test::describe(chain);
  EXPECT_EQ(test::basename_of(chain[expected.size()].file), "libc.so.6") << test::describe(chain);
  EXPECT_EQ(chain.back().function, "_start") << test::describe(chain);
}

bool can_sample_children() {
  SelfSampler probe(1'000'000, 8);
  return probe.problem().empty();
}

// The fixture workload without frame pointers (shlib_main-nofp + libtallywork-nofp.so, as
// Debian builds its libraries): callers are found through the library, across the tail
// call, down to _start.
TEST(DwarfUnwindKernelSamples, FixtureWorkloadWithoutFramePointers) {
  std::string program = test::shared("fixtures/bin/shlib_main-nofp");
  ASSERT_TRUE(std::filesystem::exists(program)) << "fixture " << program << " is missing";
  if (!can_sample_children()) TALLY_SKIP_OR_FAIL_IN_CI("perf_event_open is not permitted");
  DwarfUnwinder unwinder;
  auto seen = sample_workload(
      {program, "-r", "1000"}, {{"lib_hot", 20}, {"lib_cold", 8}, {"main_local", 12}}, unwinder,
      [](const std::vector<Place>& chain) {
        const std::string& leaf = chain[0].function;
        // lib_entry ends in a tail call to lib_cold: lib_cold's caller is run_rounds.
        if (leaf == "lib_hot") expect_chain(chain, {"lib_hot", "lib_entry", "run_rounds", "main"});
        if (leaf == "lib_cold") expect_chain(chain, {"lib_cold", "run_rounds", "main"});
        if (leaf == "main_local") expect_chain(chain, {"main_local", "run_rounds", "main"});
        EXPECT_EQ(test::basename_of(chain[0].file),
                  leaf == "main_local" ? "shlib_main-nofp" : "libtallywork-nofp.so");
      });
  EXPECT_GE(seen["lib_hot"], 20u);
  EXPECT_GE(seen["lib_cold"], 8u);
  EXPECT_GE(seen["main_local"], 12u);
  EXPECT_EQ(unwinder.stats().frame_pointer_steps, 0u);
}

// 206-frame stacks without frame pointers (perf's kernel unwinder cuts them at 127):
// every one of the 200 descend frames is there.
TEST(DwarfUnwindKernelSamples, DeepRecursionWithoutFramePointers) {
  std::string program = test::shared("fixtures/bin/deep-nofp");
  ASSERT_TRUE(std::filesystem::exists(program)) << "fixture " << program << " is missing";
  if (!can_sample_children()) TALLY_SKIP_OR_FAIL_IN_CI("perf_event_open is not permitted");
  DwarfUnwinder unwinder;
  auto expected = [](const char* leaf, int depth) {
    std::vector<std::string> names{leaf};
    names.insert(names.end(), static_cast<size_t>(depth), "descend");
    names.insert(names.end(), {"run_rounds", "main"});
    return names;
  };
  auto seen = sample_workload({program, "-r", "1000"}, {{"deep_leaf", 15}, {"shallow_leaf", 5}},
                              unwinder, [&](const std::vector<Place>& chain) {
                                if (chain[0].function == "deep_leaf")
                                  expect_chain(chain, expected("deep_leaf", 200));
                                else
                                  expect_chain(chain, expected("shallow_leaf", 10));
                              });
  EXPECT_GE(seen["deep_leaf"], 15u);
  EXPECT_GE(seen["shallow_leaf"], 5u);
}

}  // namespace
}  // namespace tally::collect
