// libtally's CFI unwinder (CPUPROFILE_UNWIND=cfi, the default) on frameless code: the
// workload (programs/unwind_workload.cc) is built -O2 -fomit-frame-pointer, its threads
// start in libstdc++.so, and its callbacks run inside libc's qsort and a dlopened library.
// The profiles are read by the peer, google/pprof (`pprof -traces`), which symbolizes from
// the binaries itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "runtime_test_support.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

struct Stack {
  double us = 0;
  std::vector<std::string> frames;  // leaf first
  bool has(const std::string& name) const {
    for (const auto& frame : frames)
      if (frame == name) return true;
    return false;
  }
  int index_of(const std::string& name) const {
    for (size_t i = 0; i < frames.size(); ++i)
      if (frames[i] == name) return static_cast<int>(i);
    return -1;
  }
  int count_prefix(const std::string& prefix) const {
    int count = 0;
    for (const auto& frame : frames) count += frame.starts_with(prefix);
    return count;
  }
  // The thread's root: main or a thread's start_thread, or the outermost frames themselves
  // (_start for code before main or after it returns, clone3 / clone).
  bool whole() const {
    const std::string& root = frames.back();
    return has("main") || has("start_thread") || root == "_start" || root == "clone3" || root == "clone";
  }
  // libtally's own frames (own_time.h): one frame, not a stack of the program.
  bool own_time() const {
    return frames.size() == 1 && (frames[0].starts_with("[tally: sampling") ||
                                  frames[0].starts_with("[tally: writing") ||
                                  frames[0].starts_with("[not profiled"));
  }
};

// `pprof -traces`: "-----------+---" separators, then "   250us   leaf" and a caller a line.
std::vector<Stack> parse_traces(const std::string& text) {
  std::vector<Stack> stacks;
  static const std::regex first(R"(^\s*([0-9.]+)(s|ms|us|ns)\s+(\S.*)$)"), caller(R"(^\s+(\S.*)$)");
  std::istringstream in(text);
  bool open = false;
  std::smatch match;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("-----------+")) {
      open = true;
      stacks.emplace_back();
    } else if (open && stacks.back().frames.empty() && std::regex_match(line, match, first)) {
      double value = std::stod(match[1].str());
      std::string unit = match[2].str();
      stacks.back().us = unit == "s" ? value * 1e6 : unit == "ms" ? value * 1e3 : unit == "us" ? value : value / 1e3;
      stacks.back().frames.push_back(match[3].str());
    } else if (open && !stacks.back().frames.empty() && std::regex_match(line, match, caller)) {
      stacks.back().frames.push_back(match[1].str());
    }
  }
  std::erase_if(stacks, [](const Stack& stack) { return stack.frames.empty(); });
  return stacks;
}

class UnwindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pprof_ = find_pprof();
    TALLY_REQUIRE_PEER(pprof_, "pprof");
  }

  // Runs the workload under libtally and returns pprof's stacks; `err` gets its stderr.
  std::vector<Stack> profile(const std::vector<std::string>& arguments, int frequency,
                             const std::string& unwinder = "cfi", std::string* err = nullptr) {
    std::string path = dir_.file("unwind.prof");
    std::vector<std::string> argv{program_};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    Environment environment{{"LD_PRELOAD", runtime_library()},
                            {"CPUPROFILE", path},
                            {"CPUPROFILE_FREQUENCY", std::to_string(frequency)},
                            {"CPUPROFILE_UNWIND", unwinder}};
    environment.insert(environment.end(), extra_environment_.begin(), extra_environment_.end());
    RunResult run = test::run(argv, {.cwd = dir_.path(), .environment = environment, .timeout_seconds = 120});
    EXPECT_EQ(run.exit_code, 0) << run.describe();
    if (err != nullptr) *err = run.err;
    RunResult summary = run_tally({"cat", "--summary", path});
    EXPECT_EQ(summary.exit_code, 0) << summary.describe();
    summary_ = summary.out;
    RunResult traces = test::run({pprof_, "-traces", program_, path}, {.timeout_seconds = 120});
    EXPECT_EQ(traces.exit_code, 0) << traces.describe();
    return parse_traces(traces.out);
  }

  static double program_us(const std::vector<Stack>& stacks) {
    double total = 0;
    for (const auto& stack : stacks)
      if (!stack.own_time()) total += stack.us;
    return total;
  }
  static double whole_fraction(const std::vector<Stack>& stacks) {
    double whole = 0;
    for (const auto& stack : stacks)
      if (!stack.own_time() && stack.whole()) whole += stack.us;
    return whole / program_us(stacks);
  }

  void check_recursion_workload(int frequency) {
    auto stacks = profile({"recursion", "0.6"}, frequency);
    ASSERT_FALSE(stacks.empty());
    double samples = program_us(stacks) / (1e6 / frequency);
    ASSERT_GT(samples, 0.5 * 3 * 0.6 * frequency) << "too few samples to judge";
    EXPECT_GE(whole_fraction(stacks), 0.99);
    auto [cut, samples_taken] = stacks_cut();
    ASSERT_GE(cut, 0) << "tally cat --summary gives the stacks cut:\n" << summary_;
    EXPECT_LE(cut, samples_taken / 100);

    // Every sample in the recursion's leaf has the whole recursion (42 frames) above it.
    double leaf_us = 0;
    for (const auto& stack : stacks) {
      if (stack.index_of("recursion_leaf") < 0) continue;
      leaf_us += stack.us;
      EXPECT_EQ(stack.count_prefix("recurse_"), 42) << "a stack of recursion_leaf lost frames";
      EXPECT_TRUE(stack.whole());
    }
    // 3 threads x 0.6 s x half of it in the recursion.
    EXPECT_GT(leaf_us, 0.5 * 0.9 * 1e6);

    // split_leaf: 2 parts from split_caller_twice, 1 from split_caller_once.
    double twice = 0, once = 0;
    for (const auto& stack : stacks) {
      int leaf = stack.index_of("split_leaf");
      if (leaf < 0) continue;
      if (stack.index_of("split_caller_twice") > leaf) twice += stack.us;
      if (stack.index_of("split_caller_once") > leaf) once += stack.us;
    }
    double period_us = 1e6 / frequency;
    double n_twice = twice / period_us, n_once = once / period_us;
    ASSERT_GT(n_once, 30);
    double ratio = n_twice / n_once;
    // Three standard deviations of the ratio of two Poisson counts (sampling is stratified,
    // so the real error is smaller).
    double sigma = ratio * std::sqrt(1 / n_twice + 1 / n_once);
    EXPECT_NEAR(ratio, 2.0, 3 * sigma) << n_twice << " vs " << n_once << " samples";
  }

  // `tally cat --summary`'s line "tally.stacks_cut N of M samples (...)": N and M.
  std::pair<long, long> stacks_cut() const {
    std::smatch match;
    static const std::regex line(R"(tally\.stacks_cut\s+([0-9]+) of ([0-9]+) samples)");
    if (!std::regex_search(summary_, match, line)) return {-1, -1};
    return {std::stol(match[1].str()), std::stol(match[2].str())};
  }

  std::string pprof_;
  std::string program_ = UNWIND_WORKLOAD;
  Environment extra_environment_;  // for the profiled program
  std::string summary_;  // of the latest profile
  TempDir dir_;
};

TEST_F(UnwindTest, FramelessRecursionSplitAndThreadsAt1000Hz) { check_recursion_workload(1000); }

TEST_F(UnwindTest, FramelessRecursionSplitAndThreadsAt4000Hz) { check_recursion_workload(4000); }

// Threads started by std::thread begin in libstdc++.so (execute_native_thread_routine):
// their stacks reach start_thread through it.
TEST_F(UnwindTest, ThreadStacksPassThroughLibstdcxxToStartThread) {
  auto stacks = profile({"recursion", "0.3"}, 1000);
  int through_thread_start = 0;
  for (const auto& stack : stacks) {
    int work = stack.index_of("work_rounds");
    int start = stack.index_of("start_thread");
    if (work < 0 || start < 0) continue;
    ++through_thread_start;
    EXPECT_GE(start - work, 2) << "a frame of libstdc++ between work_rounds and start_thread";
  }
  EXPECT_GT(through_thread_start, 0);
}

// The frame-pointer walk (CPUPROFILE_UNWIND=fp) on the same code: what the CFI walk fixes.
TEST_F(UnwindTest, FramePointerWalkLosesFramelessStacks) {
  auto stacks = profile({"recursion", "0.3"}, 1000, "fp");
  EXPECT_LT(whole_fraction(stacks), 0.5);
}

// Comparators called back from std::sort (inlined into the program, frameless) and from
// libc's qsort (Debian's libc: no frame pointers) keep the program's frames above.
TEST_F(UnwindTest, CallbacksFromStdSortAndQsortKeepTheirCallers) {
  auto stacks = profile({"sort", "0.6"}, 1000);
  double std_sort_us = 0, qsort_us = 0, whole_us = 0, total_us = 0;
  bool libc_frame_between = false;
  for (const auto& stack : stacks) {
    if (stack.own_time()) continue;
    total_us += stack.us;
    if (stack.whole()) whole_us += stack.us;
    int comparator = stack.index_of("compare_for_qsort");
    if (comparator >= 0) {
      qsort_us += stack.us;
      int caller = stack.index_of("sort_with_qsort");
      EXPECT_GT(caller, comparator) << "qsort's callback lost its caller";
      EXPECT_TRUE(stack.whole());
      if (caller - comparator >= 2) libc_frame_between = true;
    }
    comparator = stack.index_of("compare_for_std_sort_impl");
    if (comparator >= 0) {
      std_sort_us += stack.us;
      EXPECT_GT(stack.index_of("sort_with_std"), comparator) << "std::sort's callback lost its caller";
      EXPECT_TRUE(stack.whole());
    }
  }
  EXPECT_GT(qsort_us, 0.1 * total_us);
  EXPECT_GT(std_sort_us, 0.1 * total_us);
  EXPECT_TRUE(libc_frame_between) << "qsort's own frames (libc) between the comparator and its caller";
  EXPECT_GE(whole_us / total_us, 0.99);
}

// A library dlopened, called (it calls back into the program while samples are taken),
// and dlclosed, five times: the index is rebuilt as the loader's counts change; samples
// taken before the rebuild are the only ones cut.
TEST_F(UnwindTest, StacksThroughALibraryDlopenedAndDlclosed) {
  std::string err;
  auto stacks = profile({"dlopen", "1", UNWIND_LIBRARY}, 4000, "cfi", &err);
  double callback_us = 0, through_library_us = 0;
  for (const auto& stack : stacks) {
    int callback = stack.index_of("dlopened_callback");
    if (callback < 0) continue;
    callback_us += stack.us;
    int caller = stack.index_of("run_library_round");
    // The library's frame is between (unsymbolized if it was unloaded before the end).
    if (caller - callback >= 2 && stack.has("main")) through_library_us += stack.us;
  }
  ASSERT_GT(callback_us, 0.5e6);
  EXPECT_GE(through_library_us / callback_us, 0.95);
  EXPECT_GE(whole_fraction(stacks), 0.95);
}

// Code without CFI (an anonymous executable mapping, as a JIT makes): each sample's stack
// ends with the named frame "[tally: stack cut: no unwind info]" right above the unknown
// pc, and the profile counts them (tally cat --summary).
TEST_F(UnwindTest, StacksThroughCodeWithoutCfiAreMarkedCut) {
  std::string err;
  auto stacks = profile({"jit", "0.4"}, 1000, "cfi", &err);
  double marked_us = 0, total_us = program_us(stacks);
  for (const auto& stack : stacks) {
    if (stack.own_time() || stack.frames.back() != "[tally: stack cut: no unwind info]") continue;
    EXPECT_EQ(stack.frames.size(), 2u) << "the unknown pc, then the mark";
    marked_us += stack.us;
  }
  EXPECT_GT(marked_us, 0.8 * total_us);
  // M counts every interrupt; one whose time went to [tally: sampling] records no stack
  // (its time carries over to the next), and under load (signals in bunches: 60 of 387
  // here at load 18) many do: half, not 80%.
  auto [cut, samples_taken] = stacks_cut();
  EXPECT_GT(cut, samples_taken / 2) << summary_;
  EXPECT_NE(summary_.find("no unwind info: "), std::string::npos) << summary_;
  EXPECT_NE(err.find("tally: stacks cut short: "), std::string::npos) << err;
}

// The address ranges of one section's FDEs in `readelf --debug-dump=frames` ("... FDE
// cie=... pc=START..END" under "Contents of the SECTION section:").
std::vector<std::pair<uint64_t, uint64_t>> fde_ranges(const std::string& dump, const std::string& section) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  static const std::regex fde(R"(FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.([0-9a-f]+))");
  std::istringstream in(dump);
  bool inside = false;
  std::smatch match;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("Contents of the ")) inside = line.find(section + " section") != std::string::npos;
    if (inside && std::regex_search(line, match, fde))
      ranges.emplace_back(std::stoull(match[1].str(), nullptr, 16), std::stoull(match[2].str(), nullptr, 16));
  }
  return ranges;
}

// Code whose rules are only in .debug_frame (built -g -fno-asynchronous-unwind-tables
// -fno-unwind-tables, frameless): readelf shows that .eh_frame has no FDE for the
// recursion and .debug_frame has; libtally reads .debug_frame from the file, and pprof
// shows whole stacks with all 42 recursion frames.
TEST_F(UnwindTest, CodeWithRulesOnlyInDebugFrameHasWholeStacks) {
  program_ = DEBUG_FRAME_WORKLOAD;
  RunResult symbols = test::run({"readelf", "-sW", program_});
  ASSERT_EQ(symbols.exit_code, 0) << symbols.describe();
  std::smatch match;
  ASSERT_TRUE(std::regex_search(symbols.out, match, std::regex(R"(: ([0-9a-f]+)\s+\d+\s+FUNC\s+\S+\s+\S+\s+\S+\s+debug_frame_even\b)")))
      << symbols.out;
  uint64_t even = std::stoull(match[1].str(), nullptr, 16);
  RunResult frames = test::run({"readelf", "--debug-dump=frames", program_});
  ASSERT_EQ(frames.exit_code, 0) << frames.describe();
  auto covers = [&](const std::string& section) {
    for (auto [start, end] : fde_ranges(frames.out, section))
      if (even >= start && even < end) return true;
    return false;
  };
  EXPECT_FALSE(covers(".eh_frame")) << "the workload must have no .eh_frame FDE for its code";
  ASSERT_TRUE(covers(".debug_frame")) << frames.out.substr(0, 2000);

  for (int frequency : {1000, 4000}) {
    auto stacks = profile({"0.4"}, frequency);
    ASSERT_FALSE(stacks.empty());
    EXPECT_GE(whole_fraction(stacks), 0.99) << frequency << " Hz";
    double leaf_us = 0;
    for (const auto& stack : stacks) {
      if (stack.index_of("debug_frame_leaf") < 0) continue;
      leaf_us += stack.us;
      EXPECT_EQ(stack.count_prefix("debug_frame_even") + stack.count_prefix("debug_frame_odd"), 42)
          << "a stack of debug_frame_leaf lost frames";
      EXPECT_TRUE(stack.has("debug_frame_rounds"));
      EXPECT_TRUE(stack.whole());
    }
    EXPECT_GT(leaf_us, 0.8 * 3 * 0.4 * 1e6) << frequency << " Hz";
  }
  // The frame-pointer walk cannot: the code keeps no frame pointer.
  auto stacks = profile({"0.3"}, 1000, "fp");
  EXPECT_LT(whole_fraction(stacks), 0.5);
}

// libc's unusual frames (issue 20) at 4000 Hz: every stack reaches the thread's root, or a
// coroutine's (__start_context, where makecontext's function returns to), or ends with a
// named cut frame; a stack that stops anywhere else has a garbage frame in it.
class UnusualFramesTest : public UnwindTest {
 protected:
  void SetUp() override {
    UnwindTest::SetUp();
    program_ = UNUSUAL_FRAMES_WORKLOAD;
  }
  static bool cut(const Stack& stack) { return stack.frames.back().starts_with("[tally: stack cut: "); }
  static bool coroutine_root(const Stack& stack) { return stack.frames.back() == "__start_context"; }

  // Every stack whole, coroutine-rooted or cut; a cut one is libc's switching code (leaf)
  // and the stack-switch mark, nothing walked on. Returns the share of the program's time cut.
  double check_every_stack_ends_well(const std::vector<Stack>& stacks) {
    double cut_us = 0, total_us = 0;
    int shown = 0;
    for (const auto& stack : stacks) {
      if (stack.own_time()) continue;
      total_us += stack.us;
      if (cut(stack)) {
        cut_us += stack.us;
        const std::string& leaf = stack.frames[0];
        EXPECT_EQ(stack.frames.back(), "[tally: stack cut: stack switch]");
        EXPECT_EQ(stack.frames.size(), 2u) << leaf;
        EXPECT_TRUE(leaf.find("longjmp") != std::string::npos || leaf.find("context") != std::string::npos ||
                    leaf.find("vfork") != std::string::npos)
            << "a stack cut in " << leaf;
      }
      bool ends_well = stack.whole() || coroutine_root(stack) || cut(stack);
      EXPECT_TRUE(ends_well) << "a stack ending at " << stack.frames.back();
      if (!ends_well && ++shown <= 3) {
        std::string frames;
        for (const auto& frame : stack.frames) frames += "  " + frame + "\n";
        ADD_FAILURE() << "stack:\n" << frames;
      }
    }
    EXPECT_GT(total_us, 0);
    // The profile counts the stacks pprof shows cut (tally cat --summary), reason named.
    auto [cut_count, samples] = stacks_cut();
    EXPECT_GE(cut_count, 0) << summary_;
    if (cut_us > 0) {
      EXPECT_GT(cut_count, 0) << summary_;
      EXPECT_NE(summary_.find("stack switch: "), std::string::npos) << summary_;
    }
    return total_us > 0 ? cut_us / total_us : 1;
  }
};

TEST_F(UnusualFramesTest, UcontextCoroutinesAt4000Hz) {
  std::string err;
  auto stacks = profile({"ucontext", "1"}, 4000, "cfi", &err);
  double cut_share = check_every_stack_ends_well(stacks);
  EXPECT_LT(cut_share, 0.2) << summary_;
  // The coroutines' work: under coroutine_body, from __start_context (on the coroutine's
  // own stack, outside the thread's: read through process_vm_readv).
  double work_us = 0, rooted_us = 0;
  for (const auto& stack : stacks) {
    int work = stack.index_of("coroutine_work");
    if (work < 0) continue;
    work_us += stack.us;
    if (stack.index_of("coroutine_body") > work && coroutine_root(stack)) rooted_us += stack.us;
  }
  ASSERT_GT(work_us, 0.4e6);
  EXPECT_GE(rooted_us / work_us, 0.99);
  // Samples in swapcontext (the switch itself) are cut, and named.
  for (const auto& stack : stacks) {
    if (stack.frames[0] != "swapcontext") continue;
    EXPECT_EQ(stack.frames.back(), "[tally: stack cut: stack switch]");
  }
}

TEST_F(UnusualFramesTest, LongjmpAndVforkAt4000Hz) {
  std::string err;
  auto stacks = profile({"longjmp", "1"}, 4000, "cfi", &err);
  double cut_share = check_every_stack_ends_well(stacks);
  EXPECT_LT(cut_share, 0.2) << summary_;
  // The jumping code: jump_leaf under three jump_down frames, jump_round and main.
  double leaf_us = 0, whole_us = 0;
  for (const auto& stack : stacks) {
    int leaf = stack.index_of("jump_leaf");
    if (leaf < 0 || cut(stack)) continue;
    leaf_us += stack.us;
    if (stack.count_prefix("jump_down") == 4 && stack.index_of("jump_round") > leaf && stack.has("main"))
      whole_us += stack.us;
  }
  ASSERT_GT(leaf_us, 0.1e6);
  EXPECT_GE(whole_us / leaf_us, 0.99);
  // Samples inside libc's jump itself are cut as a stack switch, never walked on.
  for (const auto& stack : stacks) {
    if (stack.frames[0].find("longjmp") == std::string::npos) continue;
    EXPECT_TRUE(stack.whole() || stack.frames.back() == "[tally: stack cut: stack switch]")
        << stack.frames[0] << " ... " << stack.frames.back();
  }
}

// ld.so's lazy binding at 4000 Hz (the workload: programs/lazy_binding_workload.c, with
// LD_BIND_NOT=1 so that every call binds): samples in do_lookup_x, _dl_lookup_symbol_x,
// _dl_fixup, check_match, strcmp, under _dl_runtime_resolve_{xsavec,xsave,fxsave}, whose
// CFA is rbx + 32 (it realigns the stack): the walk needs the rbx its callees saved. Every
// stack whole, none cut.
TEST_F(UnwindTest, LazyBindingTrampolineFramesAreWalkedToMain) {
  program_ = LAZY_BINDING_WORKLOAD;
  extra_environment_ = {{"LD_BIND_NOT", "1"}};
  auto stacks = profile({"1"}, 4000);
  ASSERT_FALSE(stacks.empty());
  double total_us = 0, binding_us = 0, inner_us = 0, whole_binding_us = 0;
  int shown = 0;
  for (const auto& stack : stacks) {
    if (stack.own_time()) continue;
    total_us += stack.us;
    bool cut = stack.frames.back().starts_with("[tally: stack cut");
    EXPECT_FALSE(cut) << "a stack cut in " << stack.frames[0] << ": " << stack.frames.back();
    EXPECT_TRUE(stack.whole()) << "a stack ending at " << stack.frames.back();
    if ((cut || !stack.whole()) && ++shown <= 3) {
      std::string frames;
      for (const auto& frame : stack.frames) frames += "  " + frame + "\n";
      ADD_FAILURE() << "stack:\n" << frames;
    }
    int trampoline = -1;
    for (size_t i = 0; i < stack.frames.size(); ++i)
      if (stack.frames[i].starts_with("_dl_runtime_resolve")) trampoline = static_cast<int>(i);
    if (trampoline < 0) continue;
    binding_us += stack.us;
    if (trampoline > 0) inner_us += stack.us;
    // The trampoline returns to the PLT's caller: call_every_function, or main (its
    // clock_gettime, in thread_cpu_seconds inlined, binds again and again too). pprof
    // shows inlined functions (with debug info) as frames of their own: skipped.
    size_t caller_index = static_cast<size_t>(trampoline) + 1;
    while (caller_index + 1 < stack.frames.size() && stack.frames[caller_index].ends_with(" (inline)")) ++caller_index;
    const std::string& caller = stack.frames[std::min(stack.frames.size() - 1, caller_index)];
    if ((caller == "call_every_function" || caller == "main") && stack.index_of("main") > trampoline) {
      whole_binding_us += stack.us;
    } else if (++shown <= 3) {
      std::string frames;
      for (const auto& frame : stack.frames) frames += "  " + frame + "\n";
      ADD_FAILURE() << "lazy binding under another caller:\n" << frames;
    }
  }
  ASSERT_GT(total_us, 0.5e6) << summary_;
  // Most of the time is lazy binding: in the trampoline itself (xsavec/xrstor of the
  // vector registers: ~3/4 here), the rest in the C functions it calls.
  EXPECT_GT(binding_us / total_us, 0.5) << summary_;
  EXPECT_GT(inner_us, 0.05e6);
  EXPECT_EQ(whole_binding_us, binding_us);
  auto [cut_count, samples] = stacks_cut();
  EXPECT_EQ(cut_count, 0) << summary_;
}

}  // namespace
}  // namespace tally::test
