// The same regions through glibc's sprofil() and tally's, each in a child process of its
// own (glibc's aborts), showing glibc's two bugs and tally's counts right:
//
//  1. glibc's profil_count() finds the region of a pc that is not in the region of the
//     previous sample, then overwrites its choice with the overflow region and computes
//     the counter index from the overflow bin's offset 0 and scale 2 (pc / 65536 for
//     16-bit counters) while still incrementing the region it found: that sample lands in
//     counter pc / 65536 of the region, or in the overflow bin when that index is past
//     the region's end. A pc in no region lands in counter pc / 65536 of the last region
//     the binary search looked at.
//  2. A second sprofil() call frees the region table and returns 0 without installing the
//     new regions (profiling is off) and without forgetting the freed table: the next call
//     frees it again, and glibc aborts ("double free").
//
// Bug 1 is shown exactly by calling glibc's installed SIGPROF handler with a made-up
// signal context for each pc of a known sequence (its timer stopped), and statistically
// with real ticks of CPU burnt alternately in two regions. tally's counts for the same pcs
// come from its region table (the code its handler runs) and from real ticks.
#include <signal.h>
#include <sys/mman.h>
#include <sys/profil.h>  // glibc's struct prof, first: tally's header then uses it
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <new>

#include "burn.h"
#include "runtime/sprofil_regions.h"
#include "tally/sprofil.h"

namespace tally::test {
namespace {

constexpr uint64_t kMs = 1'000'000;

// Memory the child writes and the parent reads after it is gone.
template <class T>
class SharedPage {
 public:
  SharedPage() {
    void* p = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    value_ = new (p) T{};
  }
  ~SharedPage() { munmap(value_, sizeof(T)); }
  T* operator->() { return value_; }
  T& operator*() { return *value_; }

 private:
  T* value_;
};

// Runs `body` in a child; its wait status.
int in_child(const std::function<void()>& body) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  return status;
}

void expect_clean_exit(int status) {
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The exact tests make up a signal context, whose layout is known on x86-64 and AArch64;
// elsewhere they are not compiled (not skipped).
#if defined(__x86_64__) || defined(__aarch64__)
#if defined(__x86_64__)
void set_pc(ucontext_t& uc, uint64_t pc) { uc.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(pc); }
#else
void set_pc(ucontext_t& uc, uint64_t pc) { uc.uc_mcontext.pc = pc; }
#endif

// Calls glibc's sprofil() with its timer kept from firing, then feeds `pcs` to the SIGPROF
// handler it installed, as the kernel would: signal number, siginfo, context with the pc.
int feed_glibc(prof* entries, int n, const std::vector<uint64_t>& pcs) {
  sigset_t prof_only, old;
  sigemptyset(&prof_only);
  sigaddset(&prof_only, SIGPROF);
  sigprocmask(SIG_BLOCK, &prof_only, &old);
  if (sprofil(entries, n, nullptr, PROF_USHORT) != 0) return 1;
  itimerval stop{};
  setitimer(ITIMER_PROF, &stop, nullptr);
  timespec now{};
  while (sigtimedwait(&prof_only, nullptr, &now) == SIGPROF) {  // a tick before the stop
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  struct sigaction installed {};
  sigaction(SIGPROF, nullptr, &installed);
  if (installed.sa_handler == SIG_DFL || installed.sa_handler == SIG_IGN) return 2;
  auto handler = reinterpret_cast<void (*)(int, siginfo_t*, void*)>(installed.sa_sigaction);
  for (uint64_t pc : pcs) {
    siginfo_t info{};
    info.si_signo = SIGPROF;
    ucontext_t uc{};
    set_pc(uc, pc);
    handler(SIGPROF, &info, &uc);
  }
  return 0;
}

void feed_tally(prof* entries, int n, const std::vector<uint64_t>& pcs) {
  runtime::RegionTablePtr table;
  if (runtime::RegionTable::build(entries, n, PROF_USHORT, table) != 0) _exit(3);
  for (uint64_t pc : pcs) table->count(pc, 1);
}

// Two regions of 0x800 16-bit counters (one per 2 bytes of text) and an overflow bin.
struct TwoRegions {
  uint16_t r0[0x800], r1[0x800], overflow;
  int status;
};

void make_entries(TwoRegions& c, uint64_t r0_start, uint64_t r1_start, prof (&e)[3]) {
  e[0] = prof{c.r0, sizeof c.r0, r0_start, 65536};
  e[1] = prof{c.r1, sizeof c.r1, r1_start, 65536};
  e[2] = prof{&c.overflow, sizeof c.overflow, 0, 2};
}

// The same pcs through glibc's handler and tally's table, each in a child of its own.
void feed_both(uint64_t r0, uint64_t r1, const std::vector<uint64_t>& pcs, TwoRegions& glibc_counts,
               TwoRegions& tally_counts) {
  expect_clean_exit(in_child([&] {
    prof e[3];
    make_entries(glibc_counts, r0, r1, e);
    glibc_counts.status = feed_glibc(e, 3, pcs);
  }));
  expect_clean_exit(in_child([&] {
    prof e[3];
    make_entries(tally_counts, r0, r1, e);
    feed_tally(e, 3, pcs);
  }));
}

TEST(SprofilVsGlibc, SampleAfterARegionSwitchLandsInAWrongCounterOfGlibc) {
  // Low addresses, so that pc / 65536 is a counter inside the region glibc found.
  const uint64_t r0 = 0x20000, r1 = 0x40000;
  const std::vector<uint64_t> pcs = {
      0x20010, 0x20010,  // R0 counter 8, twice
      0x40020, 0x40020,  // R1 counter 0x10, twice
      0x30000,           // between the regions: the overflow bin
      0x05000,           // below both: the overflow bin
  };
  SharedPage<TwoRegions> glibc_counts, tally_counts;
  feed_both(r0, r1, pcs, *glibc_counts, *tally_counts);
  ASSERT_EQ(glibc_counts->status, 0);

  // tally: every pc in its own counter.
  TwoRegions right{};
  right.r0[8] = 2;
  right.r1[0x10] = 2;
  right.overflow = 2;
  EXPECT_EQ(std::memcmp(tally_counts->r0, right.r0, sizeof right.r0), 0);
  EXPECT_EQ(std::memcmp(tally_counts->r1, right.r1, sizeof right.r1), 0);
  EXPECT_EQ(tally_counts->overflow, 2);

  // glibc: the first pc after each switch of region in counter pc / 65536 of the region
  // found (0x20010 -> R0[2], 0x40020 -> R1[4]); 0x30000, in no region, in counter 3 of R1,
  // the last region its search looked at; only 0x5000, which glibc's own overflow
  // region [0, 0x10000) holds, reaches the overflow bin.
  TwoRegions wrong{};
  wrong.r0[2] = 1;
  wrong.r0[8] = 1;
  wrong.r1[4] = 1;
  wrong.r1[0x10] = 1;
  wrong.r1[3] = 1;
  EXPECT_EQ(std::memcmp(glibc_counts->r0, wrong.r0, sizeof wrong.r0), 0)
      << "glibc R0[2]=" << glibc_counts->r0[2] << " R0[8]=" << glibc_counts->r0[8];
  EXPECT_EQ(std::memcmp(glibc_counts->r1, wrong.r1, sizeof wrong.r1), 0)
      << "glibc R1[3]=" << glibc_counts->r1[3] << " R1[4]=" << glibc_counts->r1[4]
      << " R1[0x10]=" << glibc_counts->r1[0x10];
  EXPECT_EQ(glibc_counts->overflow, 1);
}

TEST(SprofilVsGlibc, SampleAfterARegionSwitchLandsInGlibcsOverflowBin) {
  // Addresses of real code (pc / 65536 is far past the regions' ends).
  const uint64_t r0 = 0x7f1200000000, r1 = 0x7f1200100000;
  const std::vector<uint64_t> pcs = {r0 + 0x10, r0 + 0x10, r1 + 0x40, r1 + 0x40, r1 + 0x40,
                                     r0 + 0x10, r0 + 0x12};
  SharedPage<TwoRegions> glibc_counts, tally_counts;
  feed_both(r0, r1, pcs, *glibc_counts, *tally_counts);
  ASSERT_EQ(glibc_counts->status, 0);
  EXPECT_EQ(tally_counts->r0[8], 3);
  EXPECT_EQ(tally_counts->r0[9], 1);
  EXPECT_EQ(tally_counts->r1[0x20], 3);
  EXPECT_EQ(tally_counts->overflow, 0);
  // glibc: the three switches (to R0, to R1, back to R0) went to the overflow bin.
  EXPECT_EQ(glibc_counts->r0[8], 1);
  EXPECT_EQ(glibc_counts->r0[9], 1);
  EXPECT_EQ(glibc_counts->r1[0x20], 2);
  EXPECT_EQ(glibc_counts->overflow, 3);
}

#endif  // x86-64 or AArch64

// Three calls in a row, as a program that profiles phase after phase makes them.
struct Calls {
  uint16_t first[0x800], second[0x800];
  int rc[3];
  bool off_after_second;
  uint64_t second_ticks_before_third;
  int reached_end;
};

TEST(SprofilVsGlibc, SecondCallOfGlibcTurnsProfilingOffAndTheThirdAborts) {
  SharedPage<Calls> glibc_run, tally_run;
  const CodeRange a = burn_a_range();
  auto calls = [&](Calls& c, auto sprofil_fn) {
    prof first{c.first, sizeof c.first, a.start, 65536};
    prof second{c.second, sizeof c.second, a.start, 65536};
    c.rc[0] = sprofil_fn(&first, 1, nullptr, PROF_USHORT);
    burn_a(20 * kMs);
    c.rc[1] = sprofil_fn(&second, 1, nullptr, PROF_USHORT);
    struct sigaction now {};
    sigaction(SIGPROF, nullptr, &now);
    c.off_after_second = !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL;
    burn_a(100 * kMs);
    for (uint16_t v : c.second) c.second_ticks_before_third += v;
    c.rc[2] = sprofil_fn(&second, 1, nullptr, PROF_USHORT);
    c.reached_end = 1;
    sprofil_fn(nullptr, 0, nullptr, PROF_USHORT);
  };
  const int glibc_status = in_child([&] { calls(*glibc_run, sprofil); });
  const int tally_status = in_child([&] { calls(*tally_run, tally_sprofil); });

  // glibc: the second call "succeeds", profiling is off and the new buffer gets nothing;
  // the third call frees the table again and glibc aborts the process.
  EXPECT_EQ(glibc_run->rc[0], 0);
  EXPECT_EQ(glibc_run->rc[1], 0);
  EXPECT_TRUE(glibc_run->off_after_second);
  EXPECT_EQ(glibc_run->second_ticks_before_third, 0u);
  EXPECT_EQ(glibc_run->reached_end, 0);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's allocator sees the double free first: a report, then exit(1), or
  // abort() when ASAN_OPTIONS has abort_on_error=1 (as CI runs it).
  if (WIFSIGNALED(glibc_status)) EXPECT_EQ(WTERMSIG(glibc_status), SIGABRT);
  else EXPECT_NE(WEXITSTATUS(glibc_status), 0);
#else
  ASSERT_TRUE(WIFSIGNALED(glibc_status)) << "glibc's third call returned";
  EXPECT_EQ(WTERMSIG(glibc_status), SIGABRT);
#endif

  // tally: each call replaces the regions; the second buffer counts; no abort.
  expect_clean_exit(tally_status);
  EXPECT_EQ(tally_run->rc[0], 0);
  EXPECT_EQ(tally_run->rc[1], 0);
  EXPECT_EQ(tally_run->rc[2], 0);
  EXPECT_FALSE(tally_run->off_after_second);
  EXPECT_GT(tally_run->second_ticks_before_third, 10u);
  EXPECT_EQ(tally_run->reached_end, 1);
}

// Real ticks: CPU burnt in burn_a and burn_b alternately, 8 ms at a time (two ticks), so
// that about every other tick is the first after a switch of region.
struct Alternating {
  uint16_t a[0x400], b[0x400], overflow;
  uint64_t cpu_ns, interval_ns;
  int rc;
};

void alternate(Alternating& c, int (*sprofil_fn)(prof*, int, timeval*, unsigned)) {
  const CodeRange ra = burn_a_range(), rb = burn_b_range();
  prof e[3] = {{c.a, sizeof c.a, ra.start, 65536},
               {c.b, sizeof c.b, rb.start, 65536},
               {&c.overflow, sizeof c.overflow, 0, 2}};
  timeval tv{};
  c.rc = sprofil_fn(e, 3, &tv, PROF_USHORT);
  c.interval_ns = static_cast<uint64_t>(tv.tv_sec) * 1'000'000'000u +
                  static_cast<uint64_t>(tv.tv_usec) * 1000u;
  const uint64_t t0 = process_cpu_ns();
  for (int phase = 0; phase < 50; ++phase) {
    burn_a(8 * kMs);
    burn_b(8 * kMs);
  }
  c.cpu_ns = process_cpu_ns() - t0;
  // glibc's stop: a first call after one would free the table twice; exit the child instead.
  itimerval stop{};
  setitimer(ITIMER_PROF, &stop, nullptr);
  signal(SIGPROF, SIG_IGN);
  if (sprofil_fn == tally_sprofil) tally_sprofil(nullptr, 0, nullptr, 0);
}

TEST(SprofilVsGlibc, RealTicksAlternatingBetweenRegions) {
  SharedPage<Alternating> g, t;
  expect_clean_exit(in_child([&] { alternate(*g, sprofil); }));
  expect_clean_exit(in_child([&] { alternate(*t, tally_sprofil); }));
  ASSERT_EQ(g->rc, 0);
  ASSERT_EQ(t->rc, 0);
  auto sum = [](const uint16_t* p, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; ++i) s += p[i];
    return s;
  };
  const uint64_t g_in = sum(g->a, 0x400) + sum(g->b, 0x400);
  const uint64_t t_in = sum(t->a, 0x400) + sum(t->b, 0x400);
  const uint64_t g_all = g_in + g->overflow, t_all = t_in + t->overflow;
  ASSERT_GT(g_all, 50u);
  ASSERT_GT(t_all, 50u);
  // Nearly every tick was in burn_a or burn_b: tally's overflow bin holds only the ticks
  // of the loop around them; glibc's gets the first tick after each switch, about one in
  // two (at least one in four here, allowing for the ticks' jitter).
  EXPECT_LT(t->overflow * 10, t_all) << "tally overflow " << t->overflow << " of " << t_all;
  EXPECT_GT(g->overflow * 4, g_all) << "glibc overflow " << g->overflow << " of " << g_all;
  // The interval each reports, times its ticks, against the CPU time burnt: tally's is the
  // kernel tick; glibc's is 1/sysconf(_SC_CLK_TCK) (10 ms) whatever the tick is.
  const double t_ratio = static_cast<double>(t_all * t->interval_ns) / static_cast<double>(t->cpu_ns);
  EXPECT_NEAR(t_ratio, 1.0, 0.25) << "tally: " << t_all << " ticks of " << t->interval_ns << " ns";
  const double g_ratio = static_cast<double>(g_all * g->interval_ns) / static_cast<double>(g->cpu_ns);
  if (g->interval_ns != t->interval_ns) {  // a kernel whose tick is not 1/_SC_CLK_TCK
    EXPECT_GT(std::abs(g_ratio - 1.0), 0.25) << "glibc's interval matched the CPU time";
  }
  std::printf("glibc: %lu ticks (%lu in the overflow bin) x %lu us = %.2f x the CPU time\n"
              "tally: %lu ticks (%lu in the overflow bin) x %lu us = %.2f x the CPU time\n",
              static_cast<unsigned long>(g_all), static_cast<unsigned long>(g->overflow),
              static_cast<unsigned long>(g->interval_ns / 1000), g_ratio,
              static_cast<unsigned long>(t_all), static_cast<unsigned long>(t->overflow),
              static_cast<unsigned long>(t->interval_ns / 1000), t_ratio);
}

}  // namespace
}  // namespace tally::test
