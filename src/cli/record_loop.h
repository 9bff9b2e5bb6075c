// The recording loop of `tally record`: reads the sampler until the target is done (the
// command exited, the processes are gone, --duration passed, or SIGINT / SIGTERM), with
// a progress line on a terminal. SIGINT / SIGTERM sent to tally alone are forwarded to the
// command; the command then decides when it ends, and tally still writes the profile.
#pragma once

#include "collect/child_command.h"
#include "collect/sampler.h"

namespace tally::cli {

struct LoopSettings {
  collect::ChildCommand* command = nullptr;  // -- CMD (started already), else null
  std::vector<pid_t> pids;                   // -p: stop when none of them runs any more
  double duration_seconds = 0;               // 0: no limit
};

struct LoopResult {
  bool command_ended = false;  // the command exited (its status and rusage are in it)
  int stop_signal = 0;  // SIGINT / SIGTERM that ended -p / -a, or was forwarded
  double seconds = 0;   // wall time recorded
};

// Installs the signal handlers for the duration of the recording (restored on return).
class RecordSignals {
 public:
  RecordSignals();
  ~RecordSignals();
  RecordSignals(const RecordSignals&) = delete;
  RecordSignals& operator=(const RecordSignals&) = delete;
};

// Runs until the target is done, then drains the rings into `consumer`.
LoopResult run_record_loop(collect::Sampler& sampler, collect::SampleConsumer& consumer,
                           const LoopSettings& settings);

}  // namespace tally::cli
