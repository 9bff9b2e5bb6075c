// What /proc says about the machine's processes and threads, for attaching counters
// (tally record -p / -a, tally daemon). The CPUs are in cpu_topology.h.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tally::collect {

// The threads of process `pid` (/proc/PID/task), ascending; empty when it does not exist.
std::vector<pid_t> list_threads(pid_t pid);
// Every process (the numeric entries of /proc), ascending.
std::vector<pid_t> list_processes();
// /proc/PID/task/TID/comm without its newline; "" when gone.
std::string read_comm(pid_t pid, pid_t tid);
// The process exists and is not a zombie.
bool process_running(pid_t pid);

}  // namespace tally::collect
