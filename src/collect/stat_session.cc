#include "collect/stat_session.h"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "collect/child_command.h"

namespace tally::collect {
namespace {

constexpr uint64_t kNsPerMs = 1000000;

// Blocks the signals the loop waits for with sigtimedwait (so none of them interrupts a
// read or kills tally half-way) and restores the mask on the way out, first discarding
// what is still pending: a late SIGINT or SIGPIPE must not kill tally while it prints.
class BlockedSignals {
 public:
  BlockedSignals() {
    sigemptyset(&set_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) sigaddset(&set_, sig);
    sigprocmask(SIG_BLOCK, &set_, &previous_);
  }
  ~BlockedSignals() {
    timespec zero{};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    sigprocmask(SIG_SETMASK, &previous_, nullptr);
  }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;
  const sigset_t& set() const { return set_; }
  const sigset_t& previous() const { return previous_; }

  // Waits up to `timeout_ns` for one of the signals: the signal, or 0 on timeout.
  int wait(uint64_t timeout_ns, siginfo_t& info) const {
    timespec timeout{static_cast<time_t>(timeout_ns / 1000000000ULL),
                     static_cast<long>(timeout_ns % 1000000000ULL)};
    int sig = sigtimedwait(&set_, &info, &timeout);
    return sig > 0 ? sig : 0;
  }

 private:
  sigset_t set_;
  sigset_t previous_;
};

bool is_stop_signal(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP; }

// After counting stopped with the command still running: wait for it; a second SIGINT /
// SIGTERM / SIGHUP kills it.
void wait_for_command(ChildCommand& child, const BlockedSignals& signals) {
  while (!child.poll_exit()) {
    siginfo_t info{};
    int sig = signals.wait(100 * kNsPerMs, info);
    if (is_stop_signal(sig)) kill(child.pid(), SIGKILL);
  }
}

}  // namespace

core::Expected<StatOutcome> run_stat(const StatOptions& options, StatSink& sink) {
  if (options.interval_ms == 0)
    return core::Error{"the interval must be at least 1 ms", core::ErrorKind::invalid_input};
  std::vector<CounterSlot> slots = place_counters(options.events, options.cpus, options.nodes);
  if (slots.empty())
    return core::Error{"nothing to count: no event has a CPU to be counted on",
                       core::ErrorKind::invalid_input};

  BlockedSignals signals;
  std::optional<ChildCommand> child;
  if (!options.command.empty()) {
    auto spawned = ChildCommand::spawn(options.command, signals.previous());
    if (!spawned) return spawned.error();
    child.emplace(std::move(*spawned));
  }
  const bool per_command = child && options.command_only;
  auto counters =
      CounterSet::open(options.events, std::move(slots), per_command ? child->pid() : -1,
                       /*enable_on_exec=*/per_command);
  if (!counters) return counters.error();  // an unstarted child exits when released
  // Intervals are timed from the moment counting starts (the exec for a command-only run).
  const uint64_t start = monotonic_ns();
  if (!per_command) {
    if (auto enabled = counters->enable(); !enabled) return enabled.error();
  }
  StatOutcome outcome;
  if (child) {
    if (auto started = child->start(); !started) return started.error();
    outcome.command_ran = true;
  }

  const uint64_t interval_ns = options.interval_ms * kNsPerMs;
  const uint64_t end = options.duration_ms != 0 ? start + options.duration_ms * kNsPerMs
                                                : std::numeric_limits<uint64_t>::max();
  std::vector<CounterValue> previous(counters->slots().size());
  std::vector<TraceLine> lines;
  bool output_open = true;

  auto read_interval = [&]() -> core::Status {
    lines.clear();
    ++outcome.intervals;
    int cpu = -1;
    uint64_t stamp = 0;
    for (size_t i = 0; i < counters->slots().size(); ++i) {
      const CounterSlot& slot = counters->slots()[i];
      if (slot.cpu != cpu) {
        cpu = slot.cpu;
        stamp = options.clock.now();
      }
      auto value = counters->read(i);
      if (!value) return value.error();
      lines.push_back(TraceLine{slot.event, slot.cpu, stamp,
                                increase_between(previous[i], *value), outcome.intervals});
      previous[i] = *value;
    }
    outcome.elapsed_ns = monotonic_ns() - start;
    output_open = sink.interval(lines);
    return core::ok();
  };

  uint64_t next = start + interval_ns;
  bool stop = false;
  while (!stop) {
    uint64_t now = monotonic_ns();
    const uint64_t wake = std::min(next, end);
    if (now < wake) {
      siginfo_t info{};
      int sig = signals.wait(wake - now, info);
      if (sig == SIGCHLD) {
        if (!child || !child->poll_exit()) continue;
        stop = true;
      } else if (is_stop_signal(sig)) {
        stop = true;
        outcome.interrupted = true;
        // A terminal's Ctrl-C reaches the command's process group already; a signal sent
        // to tally alone (kill) is passed on.
        if (child && info.si_code == SI_USER) kill(child->pid(), sig);
      } else if (sig != 0) {
        continue;  // SIGPIPE: the sink sees the closed output itself
      }
      now = monotonic_ns();
    }
    if (now >= end) {
      stop = true;
      if (child && !child->poll_exit()) kill(child->pid(), SIGTERM);
    }
    if (stop || now >= next) {
      if (auto read = read_interval(); !read) return read.error();
      if (!output_open) stop = true;
      // Deadlines stay on the grid start + k * interval; one missed (a stalled machine)
      // is skipped rather than caught up with a burst of short intervals.
      next += interval_ns;
      if (next <= now) next = now + interval_ns - (now - start) % interval_ns;
    }
  }
  (void)counters->disable();
  if (child) {
    wait_for_command(*child, signals);
    outcome.command_exit_code = child->exit_code();
  }
  return outcome;
}

}  // namespace tally::collect
