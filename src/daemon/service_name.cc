#include "daemon/service_name.h"

#include <limits.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace tally::daemon {

std::string service_from_cgroup(std::string_view text) {
  std::string found;
  size_t line_start = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    // "hierarchy:controllers:/path/of/units"; the deepest .service unit wins (a service's
    // own sub-cgroups come after it).
    const auto colon = line.find(':', line.find(':') + 1);
    if (colon == std::string_view::npos) continue;
    std::string_view path = line.substr(colon + 1);
    size_t part_start = 0;
    while (part_start <= path.size()) {
      size_t part_end = path.find('/', part_start);
      if (part_end == std::string_view::npos) part_end = path.size();
      std::string_view part = path.substr(part_start, part_end - part_start);
      constexpr std::string_view kSuffix = ".service";
      if (part.size() > kSuffix.size() && part.ends_with(kSuffix)) {
        part.remove_suffix(kSuffix.size());
        // "user@1000.service" is the per-user manager: a program under it is better named by
        // a deeper unit or its executable.
        if (!part.starts_with("user@")) found = std::string(part);
      }
      part_start = part_end + 1;
    }
  }
  return found;
}

std::string service_of_process(pid_t pid, bool* from_cgroup) {
  std::ifstream cgroup("/proc/" + std::to_string(pid) + "/cgroup");
  std::stringstream text;
  text << cgroup.rdbuf();
  std::string service = service_from_cgroup(text.str());
  if (from_cgroup != nullptr) *from_cgroup = !service.empty();
  return !service.empty() ? service : service_of_executable(pid);
}

std::string service_of_executable(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  char target[PATH_MAX];
  const ssize_t n = ::readlink((dir + "/exe").c_str(), target, sizeof target - 1);
  if (n > 0) {
    std::string path(target, size_t(n));
    if (path.ends_with(" (deleted)")) path.resize(path.size() - 10);
    if (auto slash = path.rfind('/'); slash != std::string::npos) path.erase(0, slash + 1);
    if (!path.empty()) return path;
  }
  // No executable: a kernel thread (kworker/0:1, ...), one series for all of them; or a
  // process gone already.
  return std::ifstream(dir + "/comm") ? "kernel" : "unknown";
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') return name;
  return "localhost";
}

}  // namespace tally::daemon
