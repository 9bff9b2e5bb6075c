#include "daemon_process.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/test_support.h"

namespace tally::test {

DaemonProcess::DaemonProcess(const std::string& db, const std::vector<std::string>& args)
    : db_(db), log_path_(db + ".log") {
  std::vector<std::string> argv = {tally_binary(), "daemon", "--db", db, "--log", log_path_};
  argv.insert(argv.end(), args.begin(), args.end());
  try {
    process_ = std::make_unique<BackgroundProcess>(argv);
  } catch (const std::exception&) {
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) return;
    if (run_tally({"flush", "--db", db_}).exit_code == 0) {
      started_ = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int DaemonProcess::stop(int signal) { return process_ ? process_->stop(signal) : -1; }

std::string DaemonProcess::log() const {
  try {
    return read_text(log_path_);
  } catch (...) {
    return "";
  }
}

std::map<std::string, double> flat_percent(const std::string& top_output,
                                           const std::vector<std::string>& names) {
  std::map<std::string, double> out;
  for (const TopRow& row : top_rows(top_output)) {
    const std::string last_word = row.name.substr(row.name.find_last_of(' ') + 1);
    for (const std::string& name : names)
      if (last_word == name) out[name] = std::stod(row.flat_percent);
  }
  return out;
}

bool can_sample_system_wide() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.disabled = 1;
  long fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
  if (fd < 0) return false;
  close(static_cast<int>(fd));
  return true;
}

}  // namespace tally::test
