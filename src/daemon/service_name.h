// The service_name label of a process: the systemd service it runs in (a ".service" unit
// in /proc/PID/cgroup; a login session's ".scope" does not count), else its executable's
// name. Fleet stores group profiles by it, so it must have few distinct values.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace tally::daemon {

// The last ".service" unit named in a /proc/PID/cgroup text ("0::/system.slice/nginx.service"
// -> "nginx"), or "" when there is none.
std::string service_from_cgroup(std::string_view cgroup_text);

// service_from_cgroup of the process, else the name of its executable (/proc/PID/exe's
// base name), else "kernel" for a kernel thread, else "unknown" (the process is gone).
// `from_cgroup`, when given, says whether the name is a cgroup's.
std::string service_of_process(pid_t pid, bool* from_cgroup = nullptr);

// The same without reading the cgroup (the caller knows it names no service): the
// executable's name, "kernel" or "unknown".
std::string service_of_executable(pid_t pid);

// gethostname(2), or "localhost".
std::string host_name();

}  // namespace tally::daemon
