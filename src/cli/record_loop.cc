#include "cli/record_loop.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "collect/proc_tasks.h"

namespace tally::cli {

namespace {

// Written by the handlers, read by the loop.
volatile sig_atomic_t g_stop_signal = 0;
volatile sig_atomic_t g_stop_count = 0;     // how many SIGINT / SIGTERM arrived
volatile sig_atomic_t g_forward_count = 0;  // ... of them sent to tally alone (kill, not the tty)

void on_stop_signal(int sig, siginfo_t* info, void*) {
  g_stop_signal = sig;
  g_stop_count = g_stop_count + 1;
  // Ctrl-C on a terminal reaches the whole foreground process group, the command too
  // (si_code SI_KERNEL): only a signal sent to tally alone is forwarded.
  if (info == nullptr || info->si_code != SI_KERNEL) g_forward_count = g_forward_count + 1;
}

// SIGCHLD only has to interrupt poll(), so that the loop sees the command end at once.
void on_child(int) {}

struct sigaction g_old_int, g_old_term, g_old_child;

// "12.3 s  999 samples/s  0 lost" on one self-overwriting stderr line, on a terminal only.
class ProgressLine {
 public:
  ProgressLine() : enabled_(isatty(STDERR_FILENO) == 1) {}
  ~ProgressLine() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
  }
  void update(double seconds, const collect::SamplerStats& stats) {
    if (!enabled_ || seconds - last_ < 0.5) return;
    double rate = static_cast<double>(stats.samples - last_samples_) / (seconds - last_);
    last_ = seconds;
    last_samples_ = stats.samples;
    std::fprintf(stderr, "\rtally record: %.1f s  %.0f samples/s  %llu samples  %llu lost ",
                 seconds, rate, static_cast<unsigned long long>(stats.samples),
                 static_cast<unsigned long long>(stats.lost + stats.lost_samples));
    drawn_ = true;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  double last_ = 0;
  uint64_t last_samples_ = 0;
};

bool any_running(const std::vector<pid_t>& pids) {
  for (pid_t pid : pids)
    if (collect::process_running(pid)) return true;
  return false;
}

}  // namespace

RecordSignals::RecordSignals() {
  g_stop_signal = 0;
  g_stop_count = 0;
  g_forward_count = 0;
  struct sigaction sa {};
  sa.sa_sigaction = on_stop_signal;
  sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: poll() returns at once
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  struct sigaction child {};
  child.sa_handler = on_child;
  child.sa_flags = SA_NOCLDSTOP;
  sigemptyset(&child.sa_mask);
  sigaction(SIGCHLD, &child, &g_old_child);
}

RecordSignals::~RecordSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGCHLD, &g_old_child, nullptr);
}

LoopResult run_record_loop(collect::Sampler& sampler, collect::SampleConsumer& consumer,
                           const LoopSettings& settings) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  LoopResult result;
  ProgressLine progress;
  sig_atomic_t forwarded = 0;
  bool duration_ended = false;
  for (;;) {
    (void)sampler.read(consumer, 100);
    if (settings.command) {
      if (settings.command->poll_exit()) {
        result.command_ended = true;
        break;
      }
      // Every SIGINT / SIGTERM sent to tally alone goes on to the command; tally keeps
      // recording until the command has ended.
      while (forwarded < g_forward_count) {
        ++forwarded;
        settings.command->signal(g_stop_signal);
      }
      if (g_stop_count) result.stop_signal = g_stop_signal;
      if (!duration_ended && settings.duration_seconds > 0 && elapsed() >= settings.duration_seconds) {
        duration_ended = true;
        settings.command->signal(SIGTERM);
      }
    } else {
      if (g_stop_count) {
        result.stop_signal = g_stop_signal;
        break;
      }
      if (settings.duration_seconds > 0 && elapsed() >= settings.duration_seconds) break;
      if (!settings.pids.empty() && !any_running(settings.pids)) break;
    }
    progress.update(elapsed(), sampler.stats());
  }
  result.seconds = elapsed();
  sampler.disable();
  (void)sampler.drain(consumer);
  return result;
}

}  // namespace tally::cli
