// A `tally daemon` run by a test in the background: started with a database directory,
// waited for until its control socket answers, stopped with a signal; its log is kept.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace tally::test {

class DaemonProcess {
 public:
  // Starts `tally daemon --db DB --log LOG ARGS...` and waits (up to 20 s) until `tally
  // flush` reaches it; started() is false (and log() says why) when it exited instead.
  // Killed (SIGKILL) when the object goes away, if still running.
  DaemonProcess(const std::string& db, const std::vector<std::string>& args);
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  bool started() const { return started_; }
  // Sends `signal` and waits for the exit: the exit status as a shell reports it (128 + N
  // when signal N ended it); -1 when it never ran.
  int stop(int signal);
  std::string log() const;

 private:
  std::string db_, log_path_;
  std::unique_ptr<BackgroundProcess> process_;
  bool started_ = false;
};

// "tally top" rows: function name -> flat% (the second column), for the rows whose name
// is one of `names`.
std::map<std::string, double> flat_percent(const std::string& top_output,
                                           const std::vector<std::string>& names);

// Whether this process may sample the whole machine (root, or CAP_PERFMON with a low
// perf_event_paranoid); the daemon tests skip otherwise.
bool can_sample_system_wide();

}  // namespace tally::test
